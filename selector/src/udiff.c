/* Stage 1 from a unified diff (`spyre-ci select --diff FILE|-`): git's format (`diff --git`, the
 * extended header lines, quoted paths, binary patches) and plain `diff -u` output. Strict: every
 * line is either understood or refused with "origin:line: expected ..., found '...'"; hunk
 * bodies must match their headers' line counts. Bounded by the builder's limits, which stop the
 * reading and are recorded, never applied silently. Text before the first file is a mail's
 * message, as `git format-patch` writes (or `git show`'s header): it is kept as the change
 * set's commit message (Subject and body, the id of a "From <id>" or "commit <id>" line), for
 * stage 2's message signal. A format-patch signature ("-- ") ends a patch; a series goes on at
 * its next "From " line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changes_internal.h"
#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "udiff_names.h"

struct reader {
	const char *data;
	size_t len, end; /* end: where the byte bound stops reading */
	size_t pos;      /* start of the next line */
	size_t lineno;   /* of the current line */
	const char *line;
	size_t n; /* of the current line, without "\n" (and without "\r" for header lines) */
	bool have, cut;
	const char *origin;
	struct change_builder *b;
	size_t prev_deleted; /* index of the file the previous section deleted, else SIZE_MAX */
};

/* Loads the next line; false at the end or at the byte bound (then r->cut). */
static bool advance(struct reader *r)
{
	r->have = false;
	if (r->pos >= r->len)
		return false;
	const char *s = r->data + r->pos;
	const char *nl = memchr(s, '\n', r->len - r->pos);
	size_t n = nl ? (size_t)(nl - s) : r->len - r->pos;
	size_t next = r->pos + n + (nl ? 1 : 0);
	if (next > r->end) {
		r->cut = true;
		return false;
	}
	r->line = s;
	r->n = n;
	r->pos = next;
	r->lineno++;
	r->have = true;
	return true;
}

/* Whether the current line starts with `p`. */
static bool starts(const struct reader *r, const char *p)
{
	size_t k = strlen(p);
	return r->have && r->n >= k && memcmp(r->line, p, k) == 0;
}

/* Header lines may have come through a mail that added "\r". */
static size_t header_len(const struct reader *r)
{
	return r->n && r->line[r->n - 1] == '\r' ? r->n - 1 : r->n;
}

/* "origin:line: expected X, found '...'" (the line shown printable, cut at 60 bytes). */
static int fail(const struct reader *r, const char *expected)
{
	if (!r->have) {
		if (r->cut)
			return changes__hit(r->b, "bytes", r->b->max_bytes);
		return err_set(ERR_INVAL, "%s:%zu: expected %s, found the end of the input",
			       r->origin, r->lineno + 1, expected);
	}
	char shown[64 * 4 + 8];
	size_t o = 0, n = r->n < 60 ? r->n : 60;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)r->line[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			shown[o++] = (char)c;
		else
			o += (size_t)snprintf(shown + o, sizeof(shown) - o, "\\%03o", c);
	}
	shown[o] = '\0';
	return err_set(ERR_INVAL, "%s:%zu: expected %s, found '%s%s'", r->origin, r->lineno,
		       expected, shown, r->n > n ? "..." : "");
}

/* ---- one file's section ---- */

struct section {
	bool git;
	size_t lineno; /* of its first line */
	struct udiff__name hdr_old,
	    hdr_new;                    /* "diff --git" (prefix stripped); NULL when ambiguous */
	struct udiff__name from, to;    /* "rename from/to", "copy from/to" */
	struct udiff__name minus, plus; /* "---", "+++" (prefix stripped) */
	bool is_new, is_deleted, is_rename, is_copy, binary;
	bool has_old_mode, has_new_mode;
	uint32_t old_mode, new_mode, index_mode;
	uint16_t similarity;
	char old_id[CHANGE_ID_MAX + 1], new_id[CHANGE_ID_MAX + 1]; /* the `index` line's */
};

static void section_finish(struct section *sec)
{
	udiff__name_finish(&sec->hdr_old);
	udiff__name_finish(&sec->hdr_new);
	udiff__name_finish(&sec->from);
	udiff__name_finish(&sec->to);
	udiff__name_finish(&sec->minus);
	udiff__name_finish(&sec->plus);
}

/* The two names of "diff --git A B". Unquoted names with spaces are ambiguous unless both are
 * the same path (git's rule); then they stay unknown and later lines must name them. */
static int git_header_names(struct reader *r, struct section *sec, const char *s, size_t n)
{
	struct udiff__name *a = &sec->hdr_old, *b = &sec->hdr_new;
	size_t used;
	bool ok = false;
	if (n && s[0] == '"') {
		ok = udiff__unquote(a, s, n, &used) && used + 1 < n && s[used] == ' ' &&
		     udiff__parse_path(b, s + used + 1, n - used - 1) && !b->dev_null;
	} else if (n && s[n - 1] == '"') {
		for (size_t i = 1; !ok && i + 1 < n; i++)
			if (s[i] == ' ' && s[i + 1] == '"' &&
			    udiff__unquote(b, s + i + 1, n - i - 1, &used) && used == n - i - 1)
				ok = udiff__name_set(a, s, i) == 0;
	} else {
		size_t k = n / 2, spaces = 0, last = 0;
		if (n % 2 == 1 && s[k] == ' ' && k > 2 && memcmp(s + 2, s + k + 3, k - 2) == 0) {
			ok = udiff__name_set(a, s, k) == 0 && udiff__name_set(b, s + k + 1, k) == 0;
		} else {
			for (size_t i = 0; i < n; i++)
				if (s[i] == ' ')
					spaces++, last = i;
			if (spaces != 1)
				return 0; /* ambiguous: rename from/to or ---/+++ will say */
			ok = last > 0 && last + 1 < n && udiff__name_set(a, s, last) == 0 &&
			     udiff__name_set(b, s + last + 1, n - last - 1) == 0;
		}
	}
	if (!ok || !udiff__strip_prefix(a) || !udiff__strip_prefix(b)) {
		udiff__name_finish(a);
		udiff__name_finish(b);
		return fail(r, "'diff --git a/PATH b/PATH'");
	}
	return 0;
}

/* One extended header line after "diff --git"; *mine false when the line is something else. */
static int git_ext_line(struct reader *r, struct section *sec, bool *mine)
{
	const char *s = r->line;
	size_t n = header_len(r);
	*mine = true;
#define TAIL(p) (s + strlen(p)), (n - strlen(p))
	if (starts(r, "old mode ")) {
		sec->has_old_mode = true;
		return udiff__parse_mode(&sec->old_mode, TAIL("old mode "))
			   ? 0
			   : fail(r, "a mode (100644)");
	}
	if (starts(r, "new mode ")) {
		sec->has_new_mode = true;
		return udiff__parse_mode(&sec->new_mode, TAIL("new mode "))
			   ? 0
			   : fail(r, "a mode (100644)");
	}
	if (starts(r, "deleted file mode ")) {
		sec->is_deleted = true;
		return udiff__parse_mode(&sec->old_mode, TAIL("deleted file mode "))
			   ? 0
			   : fail(r, "a mode (100644)");
	}
	if (starts(r, "new file mode ")) {
		sec->is_new = true;
		return udiff__parse_mode(&sec->new_mode, TAIL("new file mode "))
			   ? 0
			   : fail(r, "a mode (100644)");
	}
	struct {
		const char *p;
		struct udiff__name *nm;
		bool *flag;
	} moves[] = { { "rename from ", &sec->from, &sec->is_rename },
		      { "rename to ", &sec->to, &sec->is_rename },
		      { "copy from ", &sec->from, &sec->is_copy },
		      { "copy to ", &sec->to, &sec->is_copy } };
	for (size_t i = 0; i < sizeof(moves) / sizeof(moves[0]); i++) {
		if (!starts(r, moves[i].p))
			continue;
		*moves[i].flag = true;
		if (!udiff__parse_path(moves[i].nm, TAIL(moves[i].p)) || moves[i].nm->dev_null)
			return fail(r, "a path");
		return 0;
	}
	if (starts(r, "similarity index ") || starts(r, "dissimilarity index ")) {
		const char *t = s + (s[0] == 's' ? 17 : 20); /* after "index " */
		size_t k = n - (size_t)(t - s), used;
		uint32_t v;
		if (!udiff__parse_u32(&v, t, k, &used) || v > 100 || used + 1 != k ||
		    t[used] != '%')
			return fail(r, "a percentage (50%)");
		if (s[0] == 's')
			sec->similarity = (uint16_t)v;
		return 0;
	}
	if (starts(r, "index ")) {
		size_t i = 6, h1 = 0, h2 = 0;
		while (i < n && strchr("0123456789abcdef", s[i]) && s[i])
			i++, h1++;
		if (i + 1 < n && s[i] == '.' && s[i + 1] == '.')
			for (i += 2; i < n && strchr("0123456789abcdef", s[i]) && s[i]; i++)
				h2++;
		if (h1 < 4 || h2 < 4 || h1 > CHANGE_ID_MAX || h2 > CHANGE_ID_MAX)
			return fail(r, "'index HEX..HEX [MODE]'");
		memcpy(sec->old_id, s + 6, h1);
		sec->old_id[h1] = 0;
		memcpy(sec->new_id, s + 6 + h1 + 2, h2);
		sec->new_id[h2] = 0;
		if (i == n)
			return 0;
		if (s[i] == ' ' && udiff__parse_mode(&sec->index_mode, s + i + 1, n - i - 1))
			return 0;
		return fail(r, "'index HEX..HEX [MODE]'");
	}
#undef TAIL
	*mine = false;
	return 0;
}

/* "--- A" then "+++ B"; leaves the reader on the "+++" line. */
static int minus_plus(struct reader *r, struct section *sec)
{
	if (!udiff__parse_path(&sec->minus, r->line + 4, header_len(r) - 4))
		return fail(r, "'--- PATH' or '--- /dev/null'");
	if (!advance(r) || !starts(r, "+++ "))
		return fail(r, "'+++ PATH' after '---'");
	if (!udiff__parse_path(&sec->plus, r->line + 4, header_len(r) - 4))
		return fail(r, "'+++ PATH' or '+++ /dev/null'");
	if (sec->minus.dev_null && sec->plus.dev_null)
		return fail(r, "a file on at least one side ('---' and '+++' are both /dev/null)");
	bool strip =
	    sec->git || ((sec->minus.dev_null || memchr(sec->minus.s, '/', sec->minus.n)) &&
			 (sec->plus.dev_null || memchr(sec->plus.s, '/', sec->plus.n)));
	if (strip && ((!sec->minus.dev_null && !udiff__strip_prefix(&sec->minus)) ||
		      (!sec->plus.dev_null && !udiff__strip_prefix(&sec->plus))))
		return fail(r, "paths with a prefix ('a/PATH', 'b/PATH')");
	return 0;
}

/* ---- hunks ---- */

/* "START[,LINES]" at s[*i]; a missing count means 1. */
static bool hunk_range(const char *s, size_t n, size_t *i, uint32_t *start, uint32_t *lines)
{
	size_t used;
	if (!udiff__parse_u32(start, s + *i, n - *i, &used))
		return false;
	*i += used;
	*lines = 1;
	if (*i < n && s[*i] == ',') {
		(*i)++;
		if (!udiff__parse_u32(lines, s + *i, n - *i, &used))
			return false;
		*i += used;
	}
	return true;
}

static int hunk_header(struct reader *r, struct change_hunk *h)
{
	const char *s = r->line;
	size_t n = header_len(r), i = 4;
	const char *what = "a hunk header '@@ -A[,B] +C[,D] @@'";
	if (!starts(r, "@@ -") || !hunk_range(s, n, &i, &h->old_start, &h->old_lines))
		return fail(r, what);
	if (n - i < 2 || memcmp(s + i, " +", 2) != 0)
		return fail(r, what);
	i += 2;
	if (!hunk_range(s, n, &i, &h->new_start, &h->new_lines))
		return fail(r, what);
	if (n - i < 3 || memcmp(s + i, " @@", 3) != 0 || (n > i + 3 && s[i + 3] != ' '))
		return fail(r, what);
	if ((h->old_lines && !h->old_start) || (h->new_lines && !h->new_start))
		return fail(r, "a hunk that starts at line 1 or later");
	return 0;
}

/* The body of a hunk: exactly old_lines lines on the old side and new_lines on the new one.
 * Leaves the reader on the line after it. */
static int hunk_body(struct reader *r, const struct change_hunk *h)
{
	uint32_t old_rem = h->old_lines, new_rem = h->new_lines;
	size_t at = r->lineno;
	bool any = false;
	char what[160];
	while (old_rem || new_rem) {
		snprintf(what, sizeof(what),
			 "%u more old and %u more new line(s) of the hunk at line %zu", old_rem,
			 new_rem, at);
		if (!advance(r))
			return fail(r, what);
		char c = r->n ? r->line[0] : ' '; /* an empty line: a context line lost its ' ' */
		if (c == '\\' && any)
			continue;
		if ((c == ' ' && (!old_rem || !new_rem)) || (c == '-' && !old_rem) ||
		    (c == '+' && !new_rem) || (c != ' ' && c != '-' && c != '+'))
			return fail(r, what);
		old_rem -= c != '+';
		new_rem -= c != '-';
		any = true;
	}
	advance(r);
	if (any && starts(r, "\\")) /* "\ No newline at end of file" after the last line */
		advance(r);
	return 0;
}

/* The hunks of the file just added; the reader is on the "+++" line. */
static int hunks(struct reader *r)
{
	struct change_hunk prev = { 0 };
	bool first = true;
	advance(r);
	if (!starts(r, "@@ "))
		return fail(r, "a hunk header '@@ -A[,B] +C[,D] @@' after '+++'");
	while (starts(r, "@@ ")) {
		struct change_hunk h;
		int rc = hunk_header(r, &h);
		if (rc)
			return rc;
		if (!first && (h.old_start < prev.old_start + prev.old_lines ||
			       h.new_start < prev.new_start + prev.new_lines))
			return fail(r, "hunks in order, not overlapping the previous one");
		rc = hunk_body(r, &h);
		if (!rc)
			rc = changes__add_hunk(r->b, &h);
		if (rc)
			return rc;
		prev = h;
		first = false;
	}
	return 0;
}

/* ---- binary content ---- */

static bool base85_line(const char *s, size_t n)
{
	static const char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				       "abcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
	if (n < 6)
		return false;
	size_t bytes;
	if (s[0] >= 'A' && s[0] <= 'Z')
		bytes = (size_t)(s[0] - 'A') + 1;
	else if (s[0] >= 'a' && s[0] <= 'z')
		bytes = (size_t)(s[0] - 'a') + 27;
	else
		return false;
	if (n - 1 != (bytes + 3) / 4 * 5)
		return false;
	for (size_t i = 1; i < n; i++)
		if (!s[i] || !strchr(alphabet, s[i]))
			return false;
	return true;
}

/* "GIT binary patch", then one or two blocks ("literal N" or "delta N", base85 lines, an empty
 * line). Checked for shape only; the content is not decoded. */
static int binary_patch(struct reader *r)
{
	for (int block = 0; block < 2; block++) {
		advance(r);
		if (block == 1 && !starts(r, "literal ") && !starts(r, "delta "))
			return 0;
		size_t k = starts(r, "literal ") ? 8 : 6, used;
		uint32_t size;
		if ((!starts(r, "literal ") && !starts(r, "delta ")) ||
		    !udiff__parse_u32(&size, r->line + k, header_len(r) - k, &used) ||
		    used != header_len(r) - k)
			return fail(r, "'literal SIZE' or 'delta SIZE' after 'GIT binary patch'");
		size_t lines = 0;
		while (advance(r) && header_len(r) > 0) {
			if (!base85_line(r->line, header_len(r)))
				return fail(r, "a base85 line of a binary patch");
			lines++;
		}
		if (!lines)
			return fail(r, "a base85 line of a binary patch");
		if (!r->have)
			return r->cut ? fail(r, "") : 0;
	}
	advance(r);
	return 0;
}

/* ---- from a section to a file change ---- */

static int section_error(const struct reader *r, const struct section *sec, const char *what)
{
	return err_set(ERR_INVAL, "%s:%zu: %s", r->origin, sec->lineno, what);
}

/* Picks the names, status and modes of a git section, checking that its lines agree. */
static int git_resolve(const struct reader *r, struct section *sec, struct file_change *fc)
{
	bool move = sec->is_rename || sec->is_copy;
	if (move && (!sec->from.s || !sec->to.s))
		return section_error(r, sec, "a rename or copy needs both 'from' and 'to' lines");
	if ((sec->is_new && (sec->is_deleted || move)) || (sec->is_deleted && move) ||
	    (sec->is_rename && sec->is_copy))
		return section_error(r, sec,
				     "a file that is new, deleted, renamed or copied at once");
	struct udiff__name *o = move ? &sec->from : sec->hdr_old.s ? &sec->hdr_old : &sec->minus;
	struct udiff__name *n = move ? &sec->to : sec->hdr_new.s ? &sec->hdr_new : &sec->plus;
	if (!o->s)
		o = n;
	if (!n->s)
		n = o;
	if (!o->s)
		return section_error(r, sec,
				     "the paths of 'diff --git' are ambiguous and no later "
				     "line names them");
	if ((sec->minus.s && !udiff__name_eq(&sec->minus, o)) ||
	    (sec->plus.s && !udiff__name_eq(&sec->plus, n)) ||
	    (sec->hdr_old.s && !udiff__name_eq(&sec->hdr_old, o)) ||
	    (sec->hdr_new.s && !udiff__name_eq(&sec->hdr_new, n)) ||
	    (!move && !udiff__name_eq(o, n)))
		return section_error(r, sec, "the lines of this file name different paths");
	bool has_content = sec->minus.s || sec->minus.dev_null;
	if (has_content &&
	    (sec->minus.dev_null != sec->is_new || sec->plus.dev_null != sec->is_deleted))
		return section_error(
		    r, sec, "'/dev/null' in '---'/'+++' disagrees with the file mode lines");
	fc->status = sec->is_new       ? CHANGE_ADDED
		     : sec->is_deleted ? CHANGE_DELETED
		     : sec->is_rename  ? CHANGE_RENAMED
		     : sec->is_copy    ? CHANGE_COPIED
				       : CHANGE_MODIFIED;
	uint32_t dflt = sec->index_mode ? sec->index_mode : CHANGE_MODE_FILE;
	fc->old_mode = sec->is_new                            ? 0
		       : sec->has_old_mode || sec->is_deleted ? sec->old_mode
							      : dflt;
	fc->new_mode = sec->is_deleted                    ? 0
		       : sec->has_new_mode || sec->is_new ? sec->new_mode
							  : dflt;
	if (fc->status == CHANGE_MODIFIED && (fc->old_mode & 0170000u) != (fc->new_mode & 0170000u))
		fc->status = CHANGE_TYPECHANGE;
	fc->similarity = move ? sec->similarity : 0;
	memcpy(fc->old_id, sec->old_id, sizeof(fc->old_id));
	memcpy(fc->new_id, sec->new_id, sizeof(fc->new_id));
	int rc = changes__path_set(&fc->old_path, o->s, o->n);
	if (!rc)
		rc = changes__path_set(&fc->new_path, n->s, n->n);
	return rc ? err_prefix("%s:%zu", r->origin, sec->lineno) : 0;
}

static int plain_resolve(const struct reader *r, struct section *sec, struct file_change *fc)
{
	struct udiff__name *o = sec->minus.dev_null ? &sec->plus : &sec->minus;
	struct udiff__name *n = sec->plus.dev_null ? &sec->minus : &sec->plus;
	fc->status = sec->minus.dev_null  ? CHANGE_ADDED
		     : sec->plus.dev_null ? CHANGE_DELETED
					  : CHANGE_MODIFIED;
	fc->old_mode = sec->minus.dev_null ? 0 : CHANGE_MODE_FILE;
	fc->new_mode = sec->plus.dev_null ? 0 : CHANGE_MODE_FILE;
	int rc = changes__path_set(&fc->old_path, o->s, o->n);
	if (!rc)
		rc = changes__path_set(&fc->new_path, n->s, n->n);
	return rc ? err_prefix("%s:%zu", r->origin, sec->lineno) : 0;
}

/* Adds the section's file to the set. */
static int section_add(struct reader *r, struct section *sec)
{
	struct file_change *fc;
	int rc = changes__add_file(r->b, &fc);
	if (rc)
		return rc;
	fc->binary = sec->binary;
	return sec->git ? git_resolve(r, sec, fc) : plain_resolve(r, sec, fc);
}

/* git writes a type change (file <-> symlink, say) as a deletion and an addition of one path,
 * one after the other; libgit2 reports one type change. Joins the last two files when so. */
static int join_typechange(struct change_builder *b, size_t deleted_at)
{
	struct change_set *s = b->set;
	if (deleted_at + 2 != s->n_files)
		return 0;
	struct file_change *d = &s->files[s->n_files - 2], *a = &s->files[s->n_files - 1];
	if (d->status != CHANGE_DELETED || a->status != CHANGE_ADDED ||
	    d->old_path.len != a->new_path.len ||
	    memcmp(d->old_path.bytes, a->new_path.bytes, a->new_path.len) != 0 ||
	    (d->old_mode & 0170000u) == (a->new_mode & 0170000u))
		return 0;
	size_t nh = d->n_hunks + a->n_hunks;
	if (nh) {
		struct change_hunk *h = realloc(d->hunks, nh * sizeof(*h));
		if (!h)
			return err_set(ERR_NOMEM, "diff: out of memory");
		if (a->n_hunks)
			memcpy(h + d->n_hunks, a->hunks, a->n_hunks * sizeof(*h));
		d->hunks = h;
	}
	d->n_hunks = nh;
	d->status = CHANGE_TYPECHANGE;
	d->new_mode = a->new_mode;
	memcpy(d->new_id, a->new_id, sizeof(d->new_id));
	d->binary = d->binary || a->binary;
	changes__file_finish(a);
	s->n_files--;
	b->cap_hunks = nh;
	return 0;
}

/* After the section's header lines: its content (hunks, a binary marker or patch, or none). */
static int section_content(struct reader *r, struct section *sec)
{
	int rc;
	if (starts(r, "--- ")) {
		rc = minus_plus(r, sec);
		if (!rc)
			rc = section_add(r, sec);
		return rc ? rc : hunks(r);
	}
	if (sec->git && starts(r, "GIT binary patch")) {
		sec->binary = true;
		rc = section_add(r, sec);
		return rc ? rc : binary_patch(r);
	}
	if (sec->git && starts(r, "Binary files ")) {
		size_t n = header_len(r);
		if (n < 20 || memcmp(r->line + n - 7, " differ", 7) != 0)
			return fail(r, "'Binary files A and B differ'");
		sec->binary = true;
		rc = section_add(r, sec);
		advance(r);
		return rc;
	}
	return section_add(r, sec);
}

static int git_section(struct reader *r)
{
	struct section sec = { .git = true, .lineno = r->lineno };
	int rc = git_header_names(r, &sec, r->line + 11, header_len(r) - 11);
	bool mine = true;
	while (!rc && mine && advance(r))
		rc = git_ext_line(r, &sec, &mine);
	if (!rc && !r->have && r->cut)
		rc = fail(r, "");
	size_t before = r->b->set->n_files;
	if (!rc)
		rc = section_content(r, &sec);
	if (!rc && sec.is_new && r->prev_deleted == before - 1 && before > 0)
		rc = join_typechange(r->b, r->prev_deleted);
	r->prev_deleted = sec.is_deleted ? before : SIZE_MAX;
	section_finish(&sec);
	return rc;
}

static int plain_section(struct reader *r)
{
	struct section sec = { .git = false, .lineno = r->lineno };
	int rc = section_content(r, &sec);
	section_finish(&sec);
	r->prev_deleted = SIZE_MAX;
	return rc;
}

/* The first occurrence of the 5-byte `pat` in (s, n), or NULL. */
static const char *find5(const char *s, size_t n, const char *pat)
{
	for (size_t i = 0; i + 5 <= n; i++)
		if (memcmp(s + i, pat, 5) == 0)
			return s + i;
	return NULL;
}

/* Plain diff's "Binary files A and B differ" (one " and " only, else the names are unclear). */
static int plain_binary(struct reader *r)
{
	const char *s = r->line + 13;
	size_t n = header_len(r) - 13;
	/* " and " is looked for before the " differ" suffix only, so the names never overlap it. */
	const char *mid = n > 12 ? find5(s, n - 7, " and ") : NULL;
	const char *names_end = s + n - 7;
	if (!mid || memcmp(names_end, " differ", 7) != 0 ||
	    find5(mid + 5, (size_t)(names_end - mid - 5), " and "))
		return fail(r, "'Binary files A and B differ' with one ' and '");
	struct section sec = { .git = false, .lineno = r->lineno, .binary = true };
	int rc = 0;
	if (!udiff__parse_path(&sec.minus, s, (size_t)(mid - s)) ||
	    !udiff__parse_path(&sec.plus, mid + 5, (size_t)(names_end - mid - 5)) ||
	    (sec.minus.dev_null && sec.plus.dev_null))
		rc = fail(r, "'Binary files A and B differ'");
	bool strip =
	    (sec.minus.dev_null || (sec.minus.s && memchr(sec.minus.s, '/', sec.minus.n))) &&
	    (sec.plus.dev_null || (sec.plus.s && memchr(sec.plus.s, '/', sec.plus.n)));
	if (!rc && strip) {
		if (!sec.minus.dev_null)
			udiff__strip_prefix(&sec.minus);
		if (!sec.plus.dev_null)
			udiff__strip_prefix(&sec.plus);
	}
	if (!rc)
		rc = section_add(r, &sec);
	section_finish(&sec);
	advance(r);
	r->prev_deleted = SIZE_MAX;
	return rc;
}

/* ---- the mail's message ---- */

static bool hex40(const char *s, size_t n)
{
	if (n < 40 || (n > 40 && s[40] != ' '))
		return false;
	for (size_t i = 0; i < 40; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* The next line of [*p, end) into *line, *n (without "\n" and "\r"); false at the end. */
static bool next_line(const char **p, const char *end, const char **line, size_t *n)
{
	if (*p >= end)
		return false;
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	*line = *p;
	*n = (size_t)((nl ? nl : end) - *p);
	*p = nl ? nl + 1 : end;
	if (*n && (*line)[*n - 1] == '\r')
		(*n)--;
	return true;
}

/* The commit message of the text [s, s + n) before a patch: "Subject" (without "[PATCH ...]")
 * and the body up to format-patch's "---", or the whole text when it has no Subject header. */
static int add_message(struct change_builder *b, const char *s, size_t n)
{
	char id[41] = "";
	struct buf m;
	buf_init(&m, n + 64); /* the message is never longer than the text */
	const char *p = s, *end = s + n, *line;
	size_t ln;
	bool headers = true, subject = false, body = false;
	int rc = 0;
	while (!rc && next_line(&p, end, &line, &ln)) {
		if (!id[0] && ln > 5 &&
		    (memcmp(line, "From ", 5) == 0 || memcmp(line, "commit ", 7) == 0)) {
			size_t k = line[0] == 'F' ? 5 : 7;
			if (hex40(line + k, ln - k))
				memcpy(id, line + k, 40);
		}
		if (headers && ln == 0) {
			headers = false;
			body = subject;
			rc = subject ? buf_append_str(&m, "\n\n") : 0;
		} else if (headers && ln > 9 && memcmp(line, "Subject: ", 9) == 0) {
			const char *v = line + 9, *e = line + ln;
			if (*v == '[' && memchr(v, ']', (size_t)(e - v))) /* [PATCH 1/3] */
				v = (const char *)memchr(v, ']', (size_t)(e - v)) + 1;
			while (v < e && *v == ' ')
				v++;
			subject = true;
			rc = buf_append(&m, v, (size_t)(e - v));
		} else if (headers && subject && ln && (line[0] == ' ' || line[0] == '\t')) {
			rc = buf_append(&m, line, ln); /* the Subject goes on */
		} else if (body && ln == 3 && memcmp(line, "---", 3) == 0) {
			break;
		} else if (body) {
			rc = buf_append(&m, line, ln);
			rc = rc ? rc : buf_append_char(&m, '\n');
		}
	}
	if (!rc && !subject) { /* not a mail: every line of the text may name a test */
		buf_reset(&m);
		rc = buf_append(&m, s, n);
	}
	if (!rc && m.len)
		rc = changes__add_commit(b, id, buf_str(&m));
	buf_finish(&m);
	return rc;
}

/* ---- the whole input ---- */

static int parse_all(struct reader *r)
{
	bool any_file = false, any_text = false, in_text = true;
	size_t text_at = SIZE_MAX, text_end = 0; /* the current patch's text before its files */
	advance(r);
	while (r->have) {
		int rc;
		size_t n = header_len(r);
		bool file =
		    starts(r, "diff --git ") || starts(r, "--- ") || starts(r, "Binary files ");
		if (file && in_text && text_at != SIZE_MAX &&
		    (rc = add_message(r->b, r->data + text_at, text_end - text_at)))
			return rc;
		if (file)
			in_text = false;
		if (starts(r, "diff --git ")) {
			rc = git_section(r);
		} else if (starts(r, "diff --cc ") || starts(r, "diff --combined ")) {
			return fail(r, "a two-sided diff (combined diffs of merges are not read)");
		} else if (!in_text && n == 3 && memcmp(r->line, "-- ", 3) == 0) {
			/* format-patch's signature: the patch has ended; a series goes on at the
			 * next mail's "From " line */
			while (advance(r) && !starts(r, "From "))
				;
			in_text = true;
			text_at = SIZE_MAX;
			continue;
		} else if (starts(r, "--- ")) {
			rc = plain_section(r);
		} else if (starts(r, "Binary files ")) {
			rc = plain_binary(r);
		} else if (starts(r, "Only in ")) {
			return fail(r,
				    "a file diff ('Only in' hides a file's content: use diff -N)");
		} else if (starts(r, "diff ")) {
			advance(r); /* diff -ru's command line; its "---" follows */
			continue;
		} else if (in_text && !starts(r, "@@ ") && !starts(r, "+++ ")) {
			any_text = any_text || n > 0;
			if (text_at == SIZE_MAX)
				text_at = (size_t)(r->line - r->data);
			text_end = (size_t)(r->line - r->data) + r->n;
			advance(r); /* a mail's text before the patch */
			continue;
		} else {
			return fail(r, "a file header ('diff --git a/PATH b/PATH' or '--- PATH')");
		}
		if (rc)
			return rc;
		any_file = true;
	}
	if (r->cut)
		return changes__hit(r->b, "bytes", r->b->max_bytes);
	if (any_text && !any_file)
		return err_set(ERR_INVAL, "%s: no diff found (expected 'diff --git' or '--- ')",
			       r->origin);
	return 0;
}

int selector_changes_from_udiff_opts(struct change_set **out, const char *data, size_t len,
				     const char *origin, const struct changes_opts *opts)
{
	*out = NULL;
	struct change_builder b;
	int rc = changes__builder_init(&b, opts);
	if (rc)
		return rc;
	struct reader r = { .data = data,
			    .len = len,
			    .origin = origin ? origin : "<diff>",
			    .b = &b,
			    .prev_deleted = SIZE_MAX };
	r.end = len < b.max_bytes ? len : b.max_bytes;
	rc = parse_all(&r);
	if (rc < 0) {
		changes__builder_finish(&b);
		return rc;
	}
	*out = changes__builder_take(&b);
	return 0;
}

int selector_changes_from_udiff(struct change_set **out, const char *data, size_t len,
				const char *origin)
{
	return selector_changes_from_udiff_opts(out, data, len, origin, NULL);
}
