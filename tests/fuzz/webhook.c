/* Fuzz target: the webhook body's meaning (relay/daemon/webhook.c) on authenticated bodies.
 * The first byte picks the event (so every rule is reached from every body) and the rule
 * switches; the rest is the body. Invariants: a decision is always one of the four outcomes,
 * an accepted one names a 40-hex head and a tip key, and ids stay within their bounds. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "webhook.h"

static const char *const events[] = { "push", "pull_request", "repository_dispatch", "ping",
				      "check_run" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	static char *branches[] = { "main", "master" };
	struct wh_rules r = {
		.repo = "pytorch/pytorch",
		.branches = branches,
		.n_branches = 2,
		.tags = data[0] & 0x10,
		.ciflow = data[0] & 0x20,
		.dispatch_repo = (data[0] & 0x40) ? "torch-spyre/torch-spyre" : NULL,
	};
	struct wh_decision *d = malloc(sizeof(*d));
	if (!d)
		return 0;
	webhook_decide(d, &r, events[data[0] % 5], "fuzz-delivery", (const char *)data + 1,
		       size - 1);
	if (d->outcome > WH_BAD || d->n_ids < 1 || d->n_ids > 2)
		abort();
	if (d->outcome == WH_ACCEPT &&
	    (strlen(d->job.head) != 40 || strncmp(d->job.tip_key, "p", 1) != 0))
		abort();
	struct intake_item it;
	webhook_item(&it, d);
	if ((d->outcome == WH_ACCEPT) != (it.job != NULL))
		abort();
	free(d);
	return 0;
}
