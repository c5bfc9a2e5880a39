/* Private to graph.c: the Chrome trace of a graph run, one track per core with a slice per
 * kernel and relayout (from the first to the last instruction the core ran in it). */
#ifndef SPYRE_EMU_GRAPH_TRACE_H
#define SPYRE_EMU_GRAPH_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "spyre-emu/hw.h"
#include "spyre-emu/program.h"
#include "spyre-emu/timing.h"

struct graph_event {
	int core;
	uint64_t start, end; /* cycles from the start of the graph */
	char name[96];
};

struct graph_trace {
	struct graph_event *ev;
	size_t n, cap;
};

/* Adds the slices of one launch whose schedule is in `t` (no schedule: nothing), `at` cycles
 * into the graph. */
int graph_trace_add(struct graph_trace *g, const struct spyre_launch *l,
		    const struct spyre_timing *t, uint64_t at, const char *label);
int graph_trace_write(const struct graph_trace *g, const struct spyre_hw *hw, const char *path);
void graph_trace_finish(struct graph_trace *g);

#endif
