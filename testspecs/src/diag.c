/* Diagnostics of the spec loader and lint: a growable list of located messages, each string
 * owned by the list. */
#include "testspecs/spec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

#define DIAGS_MAX 100000 /* a file with more problems than this stops being reported */

void testspecs_diags_init(struct spec_diag_list *list)
{
	memset(list, 0, sizeof(*list));
}

void testspecs_diags_finish(struct spec_diag_list *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->n; i++) {
		free((char *)list->v[i].file);
		free((char *)list->v[i].path);
		free((char *)list->v[i].message);
	}
	free(list->v);
	memset(list, 0, sizeof(*list));
}

static int diags_grow(struct spec_diag_list *list)
{
	if (list->n < list->cap)
		return 0;
	if (list->cap >= DIAGS_MAX)
		return err_set(ERR_LIMIT, "more than %d diagnostics", DIAGS_MAX);
	size_t cap = list->cap ? list->cap * 2 : 16;
	struct spec_diag *v = realloc(list->v, cap * sizeof(*v));
	if (!v)
		return err_set(ERR_NOMEM, "out of memory for diagnostics");
	list->v = v;
	list->cap = cap;
	return 0;
}

int testspecs_diags_add(struct spec_diag_list *list, enum spec_severity sev,
			const struct spec_loc *loc, const char *path, const char *fmt, ...)
{
	int rc = diags_grow(list);
	if (rc)
		return rc;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct spec_diag *d = &list->v[list->n];
	memset(d, 0, sizeof(*d));
	d->file = strdup(loc && loc->file ? loc->file : "<unknown>");
	d->path = strdup(path ? path : "");
	d->message = strdup(msg);
	if (!d->file || !d->path || !d->message) {
		free((char *)d->file);
		free((char *)d->path);
		free((char *)d->message);
		return err_set(ERR_NOMEM, "out of memory for a diagnostic");
	}
	d->line = loc ? loc->line : 0;
	d->col = loc ? loc->col : 0;
	d->severity = sev;
	list->n++;
	if (sev == SPEC_ERROR)
		list->n_errors++;
	else
		list->n_warnings++;
	return 0;
}

int testspecs_diag_format(const struct spec_diag *d, char *buf, size_t size)
{
	const char *sev = d->severity == SPEC_ERROR ? "error" : "warning";
	int n;
	if (d->path && d->path[0])
		n = snprintf(buf, size, "%s:%u:%u: %s: %s (at %s)", d->file, d->line, d->col, sev,
			     d->message, d->path);
	else
		n = snprintf(buf, size, "%s:%u:%u: %s: %s", d->file, d->line, d->col, sev,
			     d->message);
	return n;
}
