/* `kernels:` cases that name an op graph (spec.h): the file is found beside the spec file,
 * read and parsed here, so that `specs lint` reports a missing or bad graph at the `graph:`
 * node, and expansion and the runner see a graph that is known to parse. */
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "common/err.h"
#include "spyre-emu/graph.h"
#include "testspecs/cases.h"
#include "walk.h"

_Static_assert(SPYRE_RELAYOUT_BEST == 0 && SPYRE_RELAYOUT_RING == 1 && SPYRE_RELAYOUT_DEVMEM == 2,
	       "spec_kernel.relayout holds the emulator's modes");

/* `rel` against the directory of `spec_file`; absolute paths and text loads ("<text>") as
 * written. 0, or -1 when the result does not fit. */
static int resolve_path(char *out, size_t size, const char *spec_file, const char *rel)
{
	const char *slash = spec_file ? strrchr(spec_file, '/') : NULL;
	int n;
	if (rel[0] == '/' || !slash)
		n = snprintf(out, size, "%s", rel);
	else
		n = snprintf(out, size, "%.*s/%s", (int)(slash - spec_file), spec_file, rel);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

void walk_kernel_graph(struct walk *w, const struct ynode *v, struct spec_kernel *kc)
{
	if (!walk_str(w, v, &kc->graph, "a graph file path"))
		return;
	char path[SPEC_GRAPH_PATH_MAX];
	if (kc->graph.len == 0 || resolve_path(path, sizeof(path), w->file, kc->graph.s) != 0) {
		walk_error(w, v, "graph path '%s' is empty or longer than %d bytes", kc->graph.s,
			   SPEC_GRAPH_PATH_MAX - 1);
		return;
	}
	struct spyre_graph *g = walk_calloc(w, 1, sizeof(*g));
	if (!g)
		return;
	if (spyre_graph_load_file(g, path) != 0) {
		const char *why = err_last(); /* "graph: ..." from the emulator's loader */
		walk_error(w, v, "graph '%s': %s", kc->graph.s,
			   strncmp(why, "graph: ", 7) == 0 ? why + 7 : why);
		err_clear();
		return;
	}
	kc->graph_path = spec_arena_strdup(w->arena, path);
	if (!kc->graph_path) {
		w->nomem = true;
		return;
	}
	kc->g = g;
}

static const char *const relayout_names[] = { "best", "ring", "devmem" };

const char *testspecs_relayout_name(int relayout)
{
	return relayout >= 0 && relayout < 3 ? relayout_names[relayout] : "?";
}

void walk_kernel_relayout(struct walk *w, const struct ynode *v, struct spec_kernel *kc)
{
	struct spec_str s;
	if (!walk_str(w, v, &s, "best, ring or devmem"))
		return;
	for (int i = 0; i < 3; i++)
		if (strcmp(s.s, relayout_names[i]) == 0) {
			kc->relayout = i;
			return;
		}
	walk_error(w, v, "relayout '%s': expected best, ring or devmem", s.s);
}
