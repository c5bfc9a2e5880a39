/* The unified-diff reader's small strict parsers over (s, n): numbers, modes and paths (git's
 * C-quoted form, a/ b/ prefixes, /dev/null). Private to udiff.c and udiff_names.c. */
#ifndef SELECTOR_UDIFF_NAMES_H
#define SELECTOR_UDIFF_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct name {
	char *s; /* NULL: not given */
	size_t n;
	bool dev_null;
};

/* Decimal digits, at most DIFF_LINE_MAX; *used is how many bytes were read. */
bool udiff_parse_u32(uint32_t *out, const char *s, size_t n, size_t *used);
/* Exactly six octal digits naming a file, an executable, a symlink or a submodule. */
bool udiff_parse_mode(uint32_t *out, const char *s, size_t n);

void udiff_name_finish(struct name *nm);
int udiff_name_set(struct name *nm, const char *s, size_t n); /* ERR_NOMEM */
bool udiff_name_eq(const struct name *a, const struct name *b);
/* A C-quoted path at s[0] == '"' (git's core.quotePath form). Sets *used to the bytes read,
 * closing quote included. false when the quoting is malformed. */
bool udiff_unquote(struct name *nm, const char *s, size_t n, size_t *used);
/* Drops the first path component ("a/x" -> "x"), as `git apply -p1`. */
bool udiff_strip_prefix(struct name *nm);
/* A path to the end of (s, n): quoted, or raw up to a tab (diff -u's timestamp follows one). */
bool udiff_parse_path(struct name *nm, const char *s, size_t n);

#endif
