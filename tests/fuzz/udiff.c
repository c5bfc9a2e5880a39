/* Fuzz target: the unified diff parser on arbitrary bytes, with the default bounds and with
 * tiny ones. Invariants: a parse either fails with a located message or gives a change set
 * whose files have both paths (bytes and printable form), valid statuses and modes consistent
 * with them, and that stays within its bounds (a bound hit is recorded); a mail's message kept as
 * a commit has a message and an id of 40 hex digits or none. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "fuzz.h"
#include "selector/changes.h"

static void check(const struct change_set *s, const struct changes_opts *o)
{
	size_t hunks = 0;
	for (size_t i = 0; i < s->n_files; i++) {
		const struct file_change *f = &s->files[i];
		if (!f->old_path.bytes || !f->new_path.bytes || !f->old_path.text ||
		    !f->new_path.text || f->old_path.len == 0 ||
		    strlen(f->new_path.bytes) != f->new_path.len)
			abort();
		if (f->status > CHANGE_TYPECHANGE)
			abort();
		if ((f->status == CHANGE_ADDED) != (f->old_mode == 0) ||
		    (f->status == CHANGE_DELETED) != (f->new_mode == 0))
			abort();
		if (f->similarity > 100)
			abort();
		hunks += f->n_hunks;
	}
	if (o &&
	    ((o->max_files && s->n_files > o->max_files) || (o->max_hunks && hunks > o->max_hunks)))
		abort();
	for (size_t i = 0; i < s->n_commits; i++) /* a mail's message: an id is 40 hex or none */
		if (!s->commits[i].message || (strlen(s->commits[i].id) != 0 &&
					       strspn(s->commits[i].id, "0123456789abcdef") != 40))
			abort();
}

static void run(const uint8_t *data, size_t size, const struct changes_opts *o)
{
	struct change_set *s = NULL;
	int rc = selector_changes_from_udiff_opts(&s, (const char *)data, size, "fuzz", o);
	if (rc == 0) {
		if (!s)
			abort();
		check(s, o);
		selector_change_set_destroy(s);
	} else if (s || strncmp(err_last(), "fuzz", 4) != 0) {
		if (rc != ERR_NOMEM && rc != ERR_LIMIT)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	run(data, size, NULL);
	struct changes_opts tiny = { .max_files = 2, .max_hunks = 3, .max_bytes = size / 2 + 1 };
	run(data, size, &tiny);
	return 0;
}
