/* Stage 1's input (funnel.h: struct funnel_change): a range of the repository's history read
 * through libgit2, or a unified diff read from a file or standard input with a bound; and the
 * selector's cache a long-running caller keeps between selections. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "funnel_int.h"

int funnel_cache_create(struct funnel_cache **out, const char *dir)
{
	*out = NULL;
	struct funnel_cache *c = calloc(1, sizeof *c);
	if (!c)
		return err_set(ERR_NOMEM, "selector cache: out of memory");
	int rc = selector_catalog_cache_create(&c->cache, 0);
	if (rc == 0 && dir && (rc = selector_catalog_cache_set_dir(c->cache, dir)) < 0)
		err_prefix("--cache %s: ", dir);
	if (rc < 0) {
		funnel_cache_destroy(c);
		return rc;
	}
	*out = c;
	return 0;
}

void funnel_cache_destroy(struct funnel_cache *c)
{
	if (!c)
		return;
	selector_catalog_cache_destroy(c->cache);
	free(c);
}

/* The whole diff, at most SELECT_DIFF_INPUT_MAX bytes; "-" is standard input. */
static int read_diff(const char *path, char **out, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f)
		return err_set_errno(errno == ENOENT ? ERR_NOTFOUND : ERR_IO, "--diff %s", path);
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	int rc = buf ? 0 : err_set(ERR_NOMEM, "--diff buffer");
	while (rc == 0) {
		if (n == cap) {
			char *nb = cap >= SELECT_DIFF_INPUT_MAX ? NULL : realloc(buf, cap * 2);
			if (!nb) {
				rc = err_set(ERR_LIMIT, "--diff %s: more than %zu bytes", path,
					     (size_t)SELECT_DIFF_INPUT_MAX);
				break;
			}
			buf = nb;
			cap *= 2;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f))
				rc = err_set_errno(ERR_IO, "reading --diff %s", path);
			break;
		}
	}
	if (f != stdin)
		fclose(f);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	*out = buf;
	*len = n;
	return 0;
}

int funnel__changes(struct change_set **out, const struct funnel_change *ch)
{
	if (!ch->diff_path)
		return selector_changes_from_git(out, ch->repo, ch->base, ch->head, NULL);
	char *data = NULL;
	size_t len = 0;
	int rc = read_diff(ch->diff_path, &data, &len);
	if (rc == 0)
		rc = selector_changes_from_udiff(out, data, len, ch->diff_path);
	free(data);
	return rc;
}
