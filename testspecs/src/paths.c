/* Paths of file entries: ${TORCH_ROOT} and ${TORCH_DEVICE_ROOT} substituted from the caller's
 * roots (torch-spyre reads the environment variables TORCH_ROOT and TORCH_DEVICE_ROOT,
 * oot_test_constants.py REL_PATH_TOKENS, and replaces each token by plain text), then
 * normalised lexically; a path that climbs out of its root is refused. Globs: `*` and `?`
 * within one segment, `**` across segments, matched without touching the disk. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "testspecs/spec.h"

static const char TOK_TORCH[] = "${TORCH_ROOT}";
static const char TOK_DEVICE[] = "${TORCH_DEVICE_ROOT}";

/* Lexical normalisation in place: "//" and "/./" collapse, ".." removes the previous segment.
 * `floor` is the length of the root prefix that ".." may not eat into. Returns -1 when a ".."
 * would climb above it. */
static int normalise(char *p, size_t floor)
{
	size_t out = floor, i = floor;
	bool abs = p[0] == '/';
	if (floor == 0 && abs) {
		out = i = 1;
		floor = 1;
	}
	while (p[i]) {
		while (p[i] == '/')
			i++;
		if (!p[i])
			break;
		size_t s = i;
		while (p[i] && p[i] != '/')
			i++;
		size_t n = i - s;
		if (n == 1 && p[s] == '.')
			continue;
		if (n == 2 && p[s] == '.' && p[s + 1] == '.') {
			if (out <= floor)
				return -1;
			size_t k = out - 1; /* drop the trailing '/' and the segment before it */
			while (k > floor && p[k - 1] != '/')
				k--;
			out = k;
			continue;
		}
		if (out > 0 && p[out - 1] != '/')
			p[out++] = '/';
		memmove(p + out, p + s, n);
		out += n;
	}
	while (out > 1 && out > floor && p[out - 1] == '/')
		out--;
	p[out] = '\0';
	return 0;
}

static char *join(const char *root, const char *rest)
{
	size_t a = strlen(root), b = strlen(rest);
	char *p = malloc(a + b + 2);
	if (!p)
		return NULL;
	memcpy(p, root, a);
	while (a > 1 && p[a - 1] == '/')
		a--;
	p[a] = '/';
	memcpy(p + a + 1, rest, b + 1);
	return p;
}

static bool under_root(const char *path, const char *root)
{
	if (!root)
		return false;
	size_t n = strlen(root);
	while (n > 1 && root[n - 1] == '/')
		n--;
	return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

int testspecs_path_resolve(const struct spec_roots *roots, const char *text, char **out)
{
	*out = NULL;
	if (strlen(text) > PATH_TEXT_MAX)
		return err_set(ERR_LIMIT, "path longer than %d bytes", PATH_TEXT_MAX);
	const char *root = NULL, *tok = NULL, *rest = text;
	if (strncmp(text, TOK_TORCH, sizeof(TOK_TORCH) - 1) == 0) {
		tok = TOK_TORCH;
		root = roots ? roots->torch_root : NULL;
		rest = text + sizeof(TOK_TORCH) - 1;
	} else if (strncmp(text, TOK_DEVICE, sizeof(TOK_DEVICE) - 1) == 0) {
		tok = TOK_DEVICE;
		root = roots ? roots->torch_device_root : NULL;
		rest = text + sizeof(TOK_DEVICE) - 1;
	}
	if (strstr(rest, "${"))
		return err_set(ERR_INVAL,
			       "path '%s': only a leading ${TORCH_ROOT} or ${TORCH_DEVICE_ROOT} "
			       "is substituted",
			       text);
	if (tok && !root)
		return err_set(ERR_INVAL, "path '%s' uses %s but that root is not set", text, tok);
	if (tok && *rest && *rest != '/')
		return err_set(ERR_INVAL, "path '%s': expected '/' after %s", text, tok);
	if (!tok && text[0] != '/')
		return err_set(ERR_INVAL,
			       "path '%s' is relative: start it with ${TORCH_ROOT} or "
			       "${TORCH_DEVICE_ROOT}",
			       text);
	char *p;
	size_t floor = 0;
	if (tok) {
		char *r = strdup(root);
		if (!r)
			return err_set(ERR_NOMEM, "out of memory resolving a path");
		if (normalise(r, 0) != 0) {
			free(r);
			return err_set(ERR_INVAL, "root '%s' climbs above '/'", root);
		}
		floor = strlen(r);
		p = join(r, rest);
		free(r);
	} else {
		p = strdup(text);
	}
	if (!p)
		return err_set(ERR_NOMEM, "out of memory resolving a path");
	if (normalise(p, floor) != 0) {
		free(p);
		return err_set(ERR_INVAL, "path '%s' climbs out of its root with '..'", text);
	}
	if (!tok && roots && (roots->torch_root || roots->torch_device_root) &&
	    !under_root(p, roots->torch_root) && !under_root(p, roots->torch_device_root)) {
		free(p);
		return err_set(ERR_INVAL,
			       "path '%s' is outside TORCH_ROOT and TORCH_DEVICE_ROOT", text);
	}
	*out = p;
	return 0;
}

bool testspecs_path_is_glob(const char *path)
{
	return strpbrk(path, "*?") != NULL;
}

/* One segment (no '/'): `*` any run, `?` one character; the classic single-backtrack
 * wildcard loop, O(len(pattern) x len(text)) at worst. */
static bool seg_match(const char *p, size_t pn, const char *s, size_t sn)
{
	size_t i = 0, j = 0, star = (size_t)-1, mark = 0;
	while (j < sn) {
		if (i < pn && (p[i] == '?' || p[i] == s[j])) {
			i++;
			j++;
		} else if (i < pn && p[i] == '*') {
			star = i++;
			mark = j;
		} else if (star != (size_t)-1) {
			i = star + 1;
			j = ++mark;
		} else {
			return false;
		}
	}
	while (i < pn && p[i] == '*')
		i++;
	return i == pn;
}

#define GLOB_SEGS_MAX 256

struct seg {
	const char *p;
	size_t n;
};

static size_t split(const char *s, struct seg *out)
{
	size_t n = 0;
	while (*s && n < GLOB_SEGS_MAX) {
		const char *e = strchr(s, '/');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		out[n].p = s;
		out[n].n = len;
		n++;
		if (!e)
			break;
		s = e + 1;
	}
	return n;
}

/* Segment-level matching: a `**` segment matches zero or more whole segments. A dynamic
 * programme over (pattern segment, path segment), bounded by GLOB_SEGS_MAX each. */
bool testspecs_glob_match(const char *pattern, const char *path)
{
	if ((pattern[0] == '/') != (path[0] == '/'))
		return false;
	static _Thread_local struct seg ps[GLOB_SEGS_MAX], ss[GLOB_SEGS_MAX];
	static _Thread_local bool dp[GLOB_SEGS_MAX + 1][GLOB_SEGS_MAX + 1];
	size_t pn = split(pattern[0] == '/' ? pattern + 1 : pattern, ps);
	size_t sn = split(path[0] == '/' ? path + 1 : path, ss);
	/* dp[i][j]: pattern segments i.. match path segments j.. */
	for (size_t i = pn + 1; i-- > 0;)
		for (size_t j = sn + 1; j-- > 0;) {
			bool m;
			if (i == pn)
				m = j == sn;
			else if (ps[i].n == 2 && ps[i].p[0] == '*' && ps[i].p[1] == '*')
				m = dp[i + 1][j] || (j < sn && dp[i][j + 1]);
			else
				m = j < sn && seg_match(ps[i].p, ps[i].n, ss[j].p, ss[j].n) &&
				    dp[i + 1][j + 1];
			dp[i][j] = m;
		}
	return dp[0][0];
}
