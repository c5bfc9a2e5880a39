/* The change set model (selector/changes.h): building one within its bounds, freeing it, and the
 * printable form of a path. The readers are changes_git.c (libgit2) and udiff.c (a diff). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changes_internal.h"
#include "common/err.h"
#include "common/limits.h"

static size_t pick(size_t given, size_t dflt)
{
	return given ? given : dflt;
}

int changes__builder_init(struct change_builder *b, const struct changes_opts *opts)
{
	memset(b, 0, sizeof(*b));
	b->set = calloc(1, sizeof(*b->set));
	if (!b->set)
		return err_set(ERR_NOMEM, "change set: out of memory");
	b->max_files = pick(opts ? opts->max_files : 0, DIFF_FILES_MAX);
	b->max_hunks = pick(opts ? opts->max_hunks : 0, DIFF_HUNKS_MAX);
	b->max_bytes = pick(opts ? opts->max_bytes : 0, DIFF_BYTES_MAX);
	b->max_commits = pick(opts ? opts->max_commits : 0, DIFF_COMMITS_MAX);
	return 0;
}

void changes__builder_finish(struct change_builder *b)
{
	selector_change_set_destroy(b->set);
	b->set = NULL;
}

struct change_set *changes__builder_take(struct change_builder *b)
{
	struct change_set *set = b->set;
	b->set = NULL; /* the caller owns it now */
	return set;
}

int changes__hit(struct change_builder *b, const char *what, uint64_t limit)
{
	struct change_set *s = b->set;
	for (size_t i = 0; i < s->n_limit_hits; i++)
		if (strcmp(s->limit_hits[i].what, what) == 0)
			return CHANGES_STOP;
	if (s->n_limit_hits < sizeof(s->limit_hits) / sizeof(s->limit_hits[0])) {
		s->limit_hits[s->n_limit_hits].what = what;
		s->limit_hits[s->n_limit_hits].limit = limit;
		s->n_limit_hits++;
	}
	return CHANGES_STOP;
}

/* Grows *arr (of `size`-byte items) to hold one more than n; doubles, from 8. */
static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 8;
	if (ncap > SIZE_MAX / size)
		return err_set(ERR_NOMEM, "change set: too large");
	void *p = realloc(*arr, ncap * size);
	if (!p)
		return err_set(ERR_NOMEM, "change set: out of memory");
	*arr = p;
	*cap = ncap;
	return 0;
}

int changes__add_file(struct change_builder *b, struct file_change **out)
{
	struct change_set *s = b->set;
	if (s->n_files >= b->max_files)
		return changes__hit(b, "files", b->max_files);
	int rc = grow((void **)&s->files, &b->cap_files, s->n_files, sizeof(*s->files));
	if (rc)
		return rc;
	*out = &s->files[s->n_files++];
	memset(*out, 0, sizeof(**out));
	b->cap_hunks = 0;
	return 0;
}

int changes__add_hunk(struct change_builder *b, const struct change_hunk *h)
{
	struct change_set *s = b->set;
	if (!s->n_files)
		return err_set(ERR_BADSTATE, "change set: a hunk before any file");
	if (b->n_hunks_total >= b->max_hunks)
		return changes__hit(b, "hunks", b->max_hunks);
	struct file_change *fc = &s->files[s->n_files - 1];
	int rc = grow((void **)&fc->hunks, &b->cap_hunks, fc->n_hunks, sizeof(*fc->hunks));
	if (rc)
		return rc;
	fc->hunks[fc->n_hunks++] = *h;
	b->n_hunks_total++;
	return 0;
}

int changes__add_bytes(struct change_builder *b, size_t n)
{
	if (n > b->max_bytes - b->n_bytes) {
		b->n_bytes = b->max_bytes;
		return changes__hit(b, "bytes", b->max_bytes);
	}
	b->n_bytes += n;
	return 0;
}

int changes__add_commit(struct change_builder *b, const char *id, const char *message)
{
	struct change_set *s = b->set;
	if (s->n_commits >= b->max_commits)
		return changes__hit(b, "commits", b->max_commits);
	size_t mlen = strlen(message);
	int rc = changes__add_bytes(b, mlen);
	if (rc)
		return rc;
	rc = grow((void **)&s->commits, &b->cap_commits, s->n_commits, sizeof(*s->commits));
	if (rc)
		return rc;
	struct change_commit *c = &s->commits[s->n_commits];
	c->message = malloc(mlen + 1);
	if (!c->message)
		return err_set(ERR_NOMEM, "change set: out of memory");
	memcpy(c->message, message, mlen + 1);
	snprintf(c->id, sizeof(c->id), "%s", id);
	s->n_commits++;
	return 0;
}

/* The length of the valid UTF-8 sequence at s (of n bytes), or 0 when it is not one. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Git's C-style quoting, except that valid UTF-8 is kept as it is (readable names stay
 * readable); every other byte that is not printable ASCII becomes a three-digit octal escape. */
char *changes__escape(const char *bytes, size_t len)
{
	char *t = malloc(len * 4 + 1);
	if (!t)
		return NULL;
	const unsigned char *s = (const unsigned char *)bytes;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		const char *esc = NULL;
		switch (c) {
		case '\a':
			esc = "\\a";
			break;
		case '\b':
			esc = "\\b";
			break;
		case '\t':
			esc = "\\t";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\v':
			esc = "\\v";
			break;
		case '\f':
			esc = "\\f";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		default:
			break;
		}
		if (esc) {
			memcpy(t + o, esc, 2);
			o += 2;
			i++;
			continue;
		}
		size_t u = (c < 0x20 || c == 0x7f) ? 0 : utf8_seq(s + i, len - i);
		if (u) {
			memcpy(t + o, s + i, u);
			o += u;
			i += u;
		} else {
			t[o++] = '\\';
			t[o++] = (char)('0' + (c >> 6));
			t[o++] = (char)('0' + ((c >> 3) & 7));
			t[o++] = (char)('0' + (c & 7));
			i++;
		}
	}
	t[o] = '\0';
	return t;
}

int changes__path_set(struct change_path *p, const char *bytes, size_t len)
{
	if (len == 0)
		return err_set(ERR_INVAL, "an empty path");
	if (len > PATH_TEXT_MAX)
		return err_set(ERR_LIMIT, "a path of %zu bytes (PATH_TEXT_MAX is %zu)", len,
			       (size_t)PATH_TEXT_MAX);
	if (memchr(bytes, '\0', len))
		return err_set(ERR_INVAL, "a path with a NUL byte");
	changes__path_finish(p);
	p->bytes = malloc(len + 1);
	p->text = changes__escape(bytes, len);
	if (!p->bytes || !p->text) {
		changes__path_finish(p);
		return err_set(ERR_NOMEM, "change set: out of memory");
	}
	memcpy(p->bytes, bytes, len);
	p->bytes[len] = '\0';
	p->len = len;
	return 0;
}

int changes__path_copy(struct change_path *dst, const struct change_path *src)
{
	return changes__path_set(dst, src->bytes, src->len);
}

void changes__path_finish(struct change_path *p)
{
	free(p->bytes);
	free(p->text);
	memset(p, 0, sizeof(*p));
}

void changes__file_finish(struct file_change *fc)
{
	changes__path_finish(&fc->old_path);
	changes__path_finish(&fc->new_path);
	free(fc->hunks);
	memset(fc, 0, sizeof(*fc));
}

void selector_change_set_destroy(struct change_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n_files; i++)
		changes__file_finish(&set->files[i]);
	free(set->files);
	for (size_t i = 0; i < set->n_commits; i++)
		free(set->commits[i].message);
	free(set->commits);
	free(set);
}

bool selector_change_set_limited(const struct change_set *set)
{
	return set && set->n_limit_hits > 0;
}

const char *selector_change_status_name(enum change_status status)
{
	switch (status) {
	case CHANGE_ADDED:
		return "added";
	case CHANGE_DELETED:
		return "deleted";
	case CHANGE_MODIFIED:
		return "modified";
	case CHANGE_RENAMED:
		return "renamed";
	case CHANGE_COPIED:
		return "copied";
	case CHANGE_TYPECHANGE:
		return "typechange";
	}
	return "?";
}

const struct change_path *selector_file_change_path(const struct file_change *fc)
{
	return fc->status == CHANGE_DELETED ? &fc->old_path : &fc->new_path;
}
