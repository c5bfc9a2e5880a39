/* The adapter table's private shapes, shared by its loader (adapters.c) and the run of a case
 * through an adapter (adapters_run.c). */
#ifndef EXECUTORS_ADAPTERS_PRIV_H
#define EXECUTORS_ADAPTERS_PRIV_H

#include <stdint.h>

#include "executors/adapters.h"

#define NAME_MAX_ 32

enum node_kind { N_CALL = 1, N_INPUT, N_NUM, N_EXPONENT };

struct node {
	enum node_kind kind;
	const struct spyre_op_info *info; /* N_CALL */
	int nargs, args[SPYRE_OP_INPUTS_MAX];
	int input;  /* N_INPUT */
	double num; /* N_NUM */
};

struct exec_adapter {
	char name[EXEC_ADAPTER_MAX];
	char ops[EXEC_ADAPTER_OPS_MAX][SPEC_CASE_OP_MAX];
	int nops;
	char reference[NAME_MAX_];
	char inputs[SPYRE_OP_INPUTS_MAX][NAME_MAX_];
	char init[SPYRE_OP_INPUTS_MAX][EXEC_INIT_NAME_MAX];
	int nin, ninit;
	uint64_t dtypes; /* bit per enum spec_dtype; 0: any */
	double exponents[EXEC_ADAPTER_VALUES_MAX];
	int nexp;
	char expr[EXEC_ADAPTER_EXPR_MAX];
	struct node nodes[EXEC_ADAPTER_NODES_MAX];
	int nnodes, root;
};

struct exec_adapters {
	struct exec_adapter v[EXEC_ADAPTERS_MAX];
	size_t n;
	char *source; /* the bytes it was parsed from: what a pool worker of another image reads */
	size_t source_len;
};

/* The emulator dtype of a spec dtype (case.c). 0 or ERR_INVAL when the emulator has none. */
int exec__emu_dtype(enum spec_dtype d, enum spyre_dtype *out);

#endif
