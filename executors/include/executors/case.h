/* One kernel case, run in the calling process: the flat form a case takes on its way to a worker
 * (no pointers, so it crosses a pipe as bytes), the result that comes back, and the runner that
 * turns one into the other. The runner makes the inputs, runs the op on spyre-emu (or its
 * rewrite through an adapter, adapters.h), compares with the float64 host reference and maps
 * the comparison onto an outcome by the case's mode:
 *   mandatory_success  passed | failed
 *   xfail              xfailed | xpassed
 *   xfail_strict       xfailed | failed (an xpass fails)
 *   a plan or input the emulator refuses   error
 *   no kernel and no adapter               skipped, with the reason */
#ifndef EXECUTORS_CASE_H
#define EXECUTORS_CASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "executors/inputs.h"
#include "spyre-emu/ops.h"
#include "spyre-emu/run.h"
#include "testspecs/cases.h"

#define EXEC_TEST_ID_MAX   512  /* bytes of an upstream test id, with its NUL */
#define EXEC_MESSAGE_MAX   256  /* bytes of a result's message */
#define EXEC_INIT_NAME_MAX 16   /* "randn", "xavier", ... */
#define EXEC_ADAPTER_MAX   32   /* bytes of an adapter name */
#define EXEC_LOC_MAX       160  /* "file:line:col" of the spec node */
#define EXEC_STEPS_MAX     1024 /* bytes of a graph case's steps text, with its NUL */

enum exec_outcome {
	EXEC_NOT_RUN = 0, /* a stopped run never reached it */
	EXEC_PASSED,
	EXEC_FAILED,
	EXEC_ERROR,
	EXEC_SKIPPED,
	EXEC_XFAILED,
	EXEC_XPASSED,
	EXEC_CRASHED,
	EXEC_TIMED_OUT,
	EXEC_FLAKY, /* failed, then passed on the retry */
	EXEC_OUTCOME_COUNT
};

/* "passed", ...; the names of docs/contracts.md, outcomes (flaky is spyre-ci's own). */
const char *exec_outcome_name(enum exec_outcome o);

/* A kernel case, flattened. Every string is NUL-terminated within its array. */
struct exec_case {
	char id[17];
	char test_id[EXEC_TEST_ID_MAX];
	char op[SPEC_CASE_OP_MAX];     /* as the spec or the scan named it */
	char emu_op[SPEC_CASE_OP_MAX]; /* the emulator's op; "" when it lacks one */
	int32_t nin;
	int64_t shapes[SPEC_CASE_INPUTS_MAX][SPEC_CASE_DIMS_MAX];
	int32_t ndims[SPEC_CASE_INPUTS_MAX];
	char init[SPEC_CASE_INPUTS_MAX][EXEC_INIT_NAME_MAX];   /* "" : the op's own initialiser */
	struct exec_init_args init_args[SPEC_CASE_INPUTS_MAX]; /* randint's range, strides */
	int32_t dtype;                                         /* enum spec_dtype */
	double atol, rtol;
	int32_t mode; /* enum spec_mode */
	uint64_t seed;
	struct spyre_op_params params;
	int32_t unsupported; /* the specs' or the emulator's refusal; `why` says it */
	char why[128];
	char loc[EXEC_LOC_MAX];
	int32_t kind;                    /* enum spec_case_kind */
	int32_t cores, relayout;         /* graph cases: 0 = all cores; spyre_relayout_mode */
	char graph[SPEC_GRAPH_PATH_MAX]; /* graph cases: the file; "" otherwise */
};

/* What a run of one case found. */
struct exec_result {
	char id[17];
	int32_t outcome;       /* enum exec_outcome */
	int32_t first_outcome; /* FLAKY: what the first attempt gave; else = outcome */
	int32_t attempts;
	double seconds; /* host wall time of the (last) attempt */
	double max_abs_err, max_rel_err;
	double atol, rtol;
	uint64_t mismatches;
	double device_us; /* modeled device time of the chosen plan(s) */
	double util_pe, util_vec;
	char plan[SPYRE_PLAN_NAME_MAX];
	char adapter[EXEC_ADAPTER_MAX]; /* "" : ran natively */
	char message[EXEC_MESSAGE_MAX];
	/* graph cases: each kernel and relayout in the order they ran, "; "-separated:
	 * "h mm <plan> 12.345us" or "t relayout ring 1.100us"; cut with "..." when long */
	char steps[EXEC_STEPS_MAX];
};

/* Fills `out` from a testspecs case: the kernel's `params` (exponent, dim, keepdim, min, max,
 * eps, approximate, causal) become op parameters, tensor inputs' `init` is kept. ERR_INVAL
 * when a field does not fit (the detail names it). */
int exec_case_from_spec(struct exec_case *out, const struct spec_case *c);

/* Checks that a case that came over a pipe is well formed (strings terminated, enums and
 * counts in range). 0 or ERR_INVAL naming the field. */
int exec_case_check(const struct exec_case *c);
int exec_result_check(const struct exec_result *r);

struct exec_adapters;

/* Runs one case in this process. `adapters` may be NULL (none). Never fails: every problem is
 * an outcome with a message. */
void exec_case_run(const struct exec_case *c, const struct exec_adapters *adapters,
		   struct exec_result *r);

/* The outcome a comparison gives under a mode (passed: the numbers agree). */
enum exec_outcome exec_outcome_for(enum spec_mode mode, bool passed);

/* Whether an outcome counts as success for the run's exit code: passed, flaky, skipped,
 * xfailed, and xpassed under a non-strict xfail. */
bool exec_outcome_ok(enum exec_outcome o);

#endif
