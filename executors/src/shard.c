/* Longest-first sharding of kernel cases by test (shard.h). */
#include "executors/shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "common/num.h"

int exec_shard_parse(const char *text, int *index, int *count)
{
	const char *slash = strchr(text, '/');
	char left[NUM_TEXT_MAX];
	if (!slash || (size_t)(slash - text) >= sizeof(left))
		return err_set(ERR_INVAL, "--shard wants I/N, not '%s'", text);
	memcpy(left, text, (size_t)(slash - text));
	left[slash - text] = '\0';
	if (num_parse_int(count, slash + 1, 1, EXEC_SHARDS_MAX) != 0 ||
	    num_parse_int(index, left, 1, *count) != 0)
		return err_set(ERR_INVAL, "--shard wants I/N with 1 <= I <= N <= %d, not '%s'",
			       EXEC_SHARDS_MAX, text);
	return 0;
}

struct group {
	const char *id; /* first case's test id */
	size_t first, ncases;
	double seconds;
	int shard;
};

static int by_id(const void *a, const void *b)
{
	return strcmp(((const struct exec_duration *)a)->id, ((const struct exec_duration *)b)->id);
}

static int by_cost(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->seconds != y->seconds)
		return x->seconds > y->seconds ? -1 : 1;
	return strcmp(x->id, y->id);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct group *)a)->id, ((const struct group *)b)->id);
}

static const struct exec_case *sort_cases; /* for by_case: qsort has no context argument */

static int by_case(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(sort_cases[x].test_id, sort_cases[y].test_id);
	return c ? c : (x < y ? -1 : x > y);
}

/* The tests of the cases, each with its cost; sorted by id. */
static struct group *groups_of(const struct exec_case *cases, size_t n, struct exec_duration *d,
			       size_t n_d, size_t *ng)
{
	struct group *g = calloc(n + 1, sizeof(*g));
	size_t *order = malloc((n + 1) * sizeof(*order));
	if (!g || !order) {
		free(g);
		free(order);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	sort_cases = cases;
	qsort(order, n, sizeof(*order), by_case);
	*ng = 0;
	for (size_t k = 0; k < n; k++) {
		const char *id = cases[order[k]].test_id;
		if (!*ng || strcmp(g[*ng - 1].id, id) != 0)
			g[(*ng)++] = (struct group){ .id = id, .first = order[k] };
		g[*ng - 1].ncases++;
	}
	free(order);
	for (size_t k = 0; k < *ng; k++) {
		struct exec_duration key = { .id = g[k].id };
		const struct exec_duration *rec =
		    n_d ? bsearch(&key, d, n_d, sizeof(*d), by_id) : NULL;
		g[k].seconds = rec && rec->seconds > 0 ? rec->seconds
						       : (double)g[k].ncases * EXEC_CASE_SECONDS;
	}
	return g;
}

int exec_shard_plan(const struct exec_case *cases, size_t n, const struct exec_duration *durations,
		    size_t n_d, int index, int count, bool *keep, double *shard_seconds)
{
	struct exec_duration *d = n_d ? malloc(n_d * sizeof(*d)) : NULL;
	double *load = calloc((size_t)count, sizeof(double));
	size_t ng = 0;
	struct group *g = NULL;
	if ((n_d && !d) || !load)
		goto nomem;
	if (n_d) {
		memcpy(d, durations, n_d * sizeof(*d));
		qsort(d, n_d, sizeof(*d), by_id);
	}
	if (!(g = groups_of(cases, n, d, n_d, &ng)))
		goto nomem;
	qsort(g, ng, sizeof(*g), by_cost);
	for (size_t k = 0; k < ng; k++) {
		int best = 0;
		for (int s = 1; s < count; s++)
			if (load[s] < load[best])
				best = s;
		g[k].shard = best + 1;
		load[best] += g[k].seconds;
	}
	qsort(g, ng, sizeof(*g), by_name);
	for (size_t i = 0; i < n; i++) {
		struct group key = { .id = cases[i].test_id };
		const struct group *hit = bsearch(&key, g, ng, sizeof(*g), by_name);
		keep[i] = hit && hit->shard == index;
	}
	if (shard_seconds)
		memcpy(shard_seconds, load, (size_t)count * sizeof(double));
	free(d);
	free(load);
	free(g);
	return 0;
nomem:
	free(d);
	free(load);
	free(g);
	return err_set(ERR_NOMEM, "shards: out of memory");
}
