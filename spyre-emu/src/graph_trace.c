/* The Chrome trace of a graph run (graph_trace.h), written with jansson. */
#include "graph_trace.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"

#define GRAPH_TRACE_EVENTS_MAX (SPYRE_CORES_MAX * 256)

int graph_trace_add(struct graph_trace *g, const struct spyre_launch *l,
		    const struct spyre_timing *t, uint64_t at, const char *label)
{
	uint64_t lo[SPYRE_CORES_MAX], hi[SPYRE_CORES_MAX];
	int seen[SPYRE_CORES_MAX] = { 0 };
	for (size_t i = 0; i < t->nsched; i++) {
		const struct spyre_sched *s = &t->sched[i];
		if (s->core < 0 || s->core >= SPYRE_CORES_MAX)
			continue;
		if (!seen[s->core] || s->start < lo[s->core])
			lo[s->core] = s->start;
		if (!seen[s->core] || s->end > hi[s->core])
			hi[s->core] = s->end;
		seen[s->core] = 1;
	}
	for (int c = 0; c < l->ncores; c++) {
		if (!seen[c])
			continue;
		if (g->n == g->cap) {
			size_t cap = g->cap ? 2 * g->cap : 64;
			if (cap > GRAPH_TRACE_EVENTS_MAX)
				return err_set(ERR_LIMIT, "graph trace: more than %d slices",
					       GRAPH_TRACE_EVENTS_MAX);
			struct graph_event *e = realloc(g->ev, cap * sizeof(*e));
			if (!e)
				return err_set(ERR_NOMEM, "graph trace: out of memory");
			g->ev = e, g->cap = cap;
		}
		struct graph_event *e = &g->ev[g->n++];
		e->core = c;
		e->start = at + lo[c];
		e->end = at + hi[c];
		snprintf(e->name, sizeof(e->name), "%s (%s)", label, l->plan);
	}
	return 0;
}

int graph_trace_write(const struct graph_trace *g, const struct spyre_hw *hw, const char *path)
{
	json_t *root = json_object(), *evs = json_array();
	double per_us = hw->clock_ghz * 1000.0; /* cycles per microsecond */
	for (int c = 0; c < hw->cores; c++) {
		char name[32];
		snprintf(name, sizeof(name), "core %d", c);
		json_array_append_new(evs, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "ph", "M",
						     "name", "thread_name", "pid", 0, "tid", c,
						     "args", "name", name));
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct graph_event *e = &g->ev[i];
		json_array_append_new(evs, json_pack("{s:s, s:s, s:i, s:i, s:f, s:f}", "ph", "X",
						     "name", e->name, "pid", 0, "tid", e->core,
						     "ts", (double)e->start / per_us, "dur",
						     (double)(e->end - e->start) / per_us));
	}
	json_object_set_new(root, "traceEvents", evs); /* root owns evs now */
	char *text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	if (!text)
		return err_set(ERR_NOMEM, "graph trace: out of memory");
	int rc = fs_atomic_write(path, text, strlen(text), 0644);
	free(text);
	return rc ? err_prefix("graph trace %s", path) : 0;
}

void graph_trace_finish(struct graph_trace *g)
{
	free(g->ev);
	memset(g, 0, sizeof(*g));
}
