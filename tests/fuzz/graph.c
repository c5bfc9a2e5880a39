/* Fuzz target: the op graph parser. Invariants: it never crashes, never reads past the input
 * (copied into a buffer of exactly its size, no NUL after it), every refusal says why, and a
 * graph it accepts is consistent: counts within their limits, every op's inputs defined before
 * it, outputs naming ops. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "fuzz.h"
#include "spyre-emu/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	struct spyre_graph *g = malloc(sizeof(*g));
	if (text == NULL || g == NULL) {
		free(text);
		free(g);
		return 0;
	}
	memcpy(text, data, size);
	int rc = spyre_graph_parse(g, text, size, "fuzz");
	free(text);
	if (rc != 0) {
		free(g);
		if (err_last()[0] == '\0')
			abort(); /* every refusal says why */
		return 0;
	}
	if (g->ninputs > SPYRE_GRAPH_INPUTS_MAX || g->nops < 1 || g->nops > SPYRE_GRAPH_OPS_MAX ||
	    g->noutputs < 1 || g->noutputs > SPYRE_GRAPH_OUTPUTS_MAX)
		abort();
	for (int k = 0; k < g->nops; k++) {
		const struct spyre_graph_op *op = &g->ops[k];
		if (!op->op || op->nin != op->op->nin)
			abort();
		for (int i = 0; i < op->nin; i++)
			if (op->in[i] < 0 || op->in[i] >= g->ninputs + k)
				abort();
	}
	for (int i = 0; i < g->noutputs; i++)
		if (g->outputs[i] < g->ninputs || g->outputs[i] >= g->ninputs + g->nops)
			abort();
	free(g);
	return 0;
}
