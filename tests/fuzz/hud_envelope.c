/* Fuzz target: the built-in receiver's reading of HUD envelopes (relay/daemon/hud_parse.c), on
 * bodies that passed the token. The first byte says whether an Idempotency-Key came with it.
 * Invariants: a body is accepted or refused with a reason; an accepted one has every field the
 * store needs, each within its bound, a known status, counts >= 0, and a key. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hud_parse.h"

static void must(int cond)
{
	if (!cond)
		abort();
}

static void bounded(const char *s)
{
	must(s && *s && strlen(s) <= RECEIVER_FIELD_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	struct hud_msg *m = malloc(sizeof(*m));
	char why[RECEIVER_FIELD_MAX * 2];
	if (!m)
		return 0;
	why[0] = 0;
	int rc = hud_msg_parse(m, (const char *)data + 1, size - 1,
			       data[0] & 1 ? "sci1-fuzz" : NULL, why, sizeof(why));
	if (rc < 0) {
		must(why[0] != 0 && m->env == NULL);
	} else {
		const struct hud_record *r = &m->rec;
		must(!strcmp(r->status, "in_progress") || !strcmp(r->status, "completed"));
		bounded(r->delivery_id);
		bounded(r->workflow);
		bounded(r->job_name);
		bounded(r->run_id);
		must(r->passed >= 0 && r->failed >= 0 && r->skipped >= 0);
		must(strcmp(r->status, "completed") || r->conclusion);
		must(r->idem_key && *r->idem_key && r->record_key == m->record_key);
		must(!r->head_sha || strlen(r->head_sha) == 40);
	}
	hud_msg_finish(m);
	free(m);
	return 0;
}
