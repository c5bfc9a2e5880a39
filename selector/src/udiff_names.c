/* The unified-diff reader's small strict parsers (udiff_names.h). */
#include "udiff_names.h"

#include <stdlib.h>
#include <string.h>

#include "changes_internal.h"
#include "common/err.h"
#include "common/limits.h"

/* Decimal digits, at most DIFF_LINE_MAX; *used is how many bytes were read. */
bool udiff__parse_u32(uint32_t *out, const char *s, size_t n, size_t *used)
{
	uint64_t v = 0;
	size_t i = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9' && i < 11)
		v = v * 10 + (uint64_t)(s[i++] - '0');
	if (i == 0 || i > 10 || v > DIFF_LINE_MAX)
		return false;
	*out = (uint32_t)v;
	*used = i;
	return true;
}

/* Exactly six octal digits naming a file, an executable, a symlink or a submodule. */
bool udiff__parse_mode(uint32_t *out, const char *s, size_t n)
{
	if (n != 6)
		return false;
	uint32_t m = 0;
	for (size_t i = 0; i < 6; i++) {
		if (s[i] < '0' || s[i] > '7')
			return false;
		m = m * 8 + (uint32_t)(s[i] - '0');
	}
	uint32_t type = m & 0170000u;
	if (type != 0100000u && type != CHANGE_MODE_SYMLINK && type != CHANGE_MODE_GITLINK)
		return false;
	*out = m;
	return true;
}

void udiff__name_finish(struct udiff__name *nm)
{
	free(nm->s);
	memset(nm, 0, sizeof(*nm));
}

int udiff__name_set(struct udiff__name *nm, const char *s, size_t n)
{
	free(nm->s);
	nm->s = malloc(n + 1);
	if (!nm->s)
		return err_set(ERR_NOMEM, "diff: out of memory");
	memcpy(nm->s, s, n);
	nm->s[n] = '\0';
	nm->n = n;
	return 0;
}

bool udiff__name_eq(const struct udiff__name *a, const struct udiff__name *b)
{
	return a->n == b->n && memcmp(a->s, b->s, a->n) == 0;
}

/* A C-quoted path at s[0] == '"' (git's core.quotePath form). Sets *used to the bytes read,
 * closing quote included. false when the quoting is malformed. */
bool udiff__unquote(struct udiff__name *nm, const char *s, size_t n, size_t *used)
{
	char *o = malloc(n + 1);
	if (!o)
		return false;
	size_t k = 0;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];
		if (c == '"') {
			o[k] = '\0';
			free(nm->s);
			nm->s = o;
			nm->n = k;
			*used = i + 1;
			return k > 0;
		}
		if (c != '\\') {
			o[k++] = c;
			continue;
		}
		if (++i >= n)
			break;
		const char *from = "abtnvfr\"\\", *to = "\a\b\t\n\v\f\r\"\\";
		const char *hit = strchr(from, s[i]);
		if (hit && s[i]) {
			o[k++] = to[hit - from];
		} else if (i + 2 < n && s[i] >= '0' && s[i] <= '3' && s[i + 1] >= '0' &&
			   s[i + 1] <= '7' && s[i + 2] >= '0' && s[i + 2] <= '7') {
			o[k++] =
			    (char)((s[i] - '0') * 64 + (s[i + 1] - '0') * 8 + (s[i + 2] - '0'));
			i += 2;
		} else {
			break;
		}
	}
	free(o);
	return false;
}

/* Drops the first path component ("a/x" -> "x"), as `git apply -p1`. */
bool udiff__strip_prefix(struct udiff__name *nm)
{
	char *slash = memchr(nm->s, '/', nm->n);
	if (!slash || slash + 1 == nm->s + nm->n)
		return false;
	size_t skip = (size_t)(slash - nm->s) + 1;
	memmove(nm->s, nm->s + skip, nm->n - skip + 1);
	nm->n -= skip;
	return true;
}

/* A path to the end of (s, n): quoted, or raw up to a tab (diff -u's timestamp follows one). */
bool udiff__parse_path(struct udiff__name *nm, const char *s, size_t n)
{
	if (n && s[0] == '"') {
		size_t used;
		if (!udiff__unquote(nm, s, n, &used))
			return false;
		return used == n || s[used] == '\t';
	}
	const char *tab = memchr(s, '\t', n);
	size_t k = tab ? (size_t)(tab - s) : n;
	if (k == 0)
		return false;
	if (k == 9 && memcmp(s, "/dev/null", 9) == 0) {
		nm->dev_null = true;
		return true;
	}
	return udiff__name_set(nm, s, k) == 0;
}
