/* The unified-diff reader's small strict parsers over (s, n): numbers, modes and paths (git's
 * C-quoted form, a/ b/ prefixes, /dev/null). Private to udiff.c and udiff_names.c. */
#ifndef SELECTOR_UDIFF_NAMES_H
#define SELECTOR_UDIFF_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct udiff__name {
	char *s; /* NULL: not given */
	size_t n;
	bool dev_null;
};

/* Decimal digits, at most DIFF_LINE_MAX; *used is how many bytes were read. */
bool udiff__parse_u32(uint32_t *out, const char *s, size_t n, size_t *used);
/* Exactly six octal digits naming a file, an executable, a symlink or a submodule. */
bool udiff__parse_mode(uint32_t *out, const char *s, size_t n);

void udiff__name_finish(struct udiff__name *nm);
int udiff__name_set(struct udiff__name *nm, const char *s, size_t n); /* ERR_NOMEM */
bool udiff__name_eq(const struct udiff__name *a, const struct udiff__name *b);
/* A C-quoted path at s[0] == '"' (git's core.quotePath form). Sets *used to the bytes read,
 * closing quote included. false when the quoting is malformed. */
bool udiff__unquote(struct udiff__name *nm, const char *s, size_t n, size_t *used);
/* Drops the first path component ("a/x" -> "x"), as `git apply -p1`. */
bool udiff__strip_prefix(struct udiff__name *nm);
/* A path to the end of (s, n): quoted, or raw up to a tab (diff -u's timestamp follows one). */
bool udiff__parse_path(struct udiff__name *nm, const char *s, size_t n);

#endif
