/* One op on the emulated card, end to end: make the inputs, copy them to the device in their
 * layouts, plan the op (every candidate plan validated and timed; the fastest is the default),
 * run the chosen plan functionally, copy the result back and compare it with the float64 host
 * reference. What `spyre-ci emu run` and the kernel-case executor call. */
#ifndef SPYRE_EMU_RUN_H
#define SPYRE_EMU_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "spyre-emu/hw.h"
#include "spyre-emu/ops.h"
#include "spyre-emu/timing.h"

#define SPYRE_PLAN_NAME_MAX 64

struct spyre_run_opts {
	const char *op;
	int nin;
	int64_t shapes[SPYRE_OP_INPUTS_MAX][SPYRE_DIMS_MAX];
	int ndims[SPYRE_OP_INPUTS_MAX];
	enum spyre_dtype dtype;
	struct spyre_op_params params;
	const struct spyre_hw *hw; /* with the core count to use */
	uint64_t seed;
	const char *plan;           /* NULL: the fastest valid plan */
	const char *trace_path;     /* NULL: no Chrome trace */
	double atol, rtol;          /* < 0: the defaults for the dtype (spyre_run_default_tol) */
	int skip_reference;         /* benchmarks: no float64 reference and no comparison */
	const char *plan_cache_dir; /* NULL: plan choices are remembered in memory only */
	/* NULL: the op makes its own inputs from `seed`. Else called once per input, after the
	 * op made it (shape and dtype as the op takes it), to overwrite its values in place:
	 * the caller's inputs, such as a spec's `init` kinds. Returns 0 or an error, which ends
	 * the run. An integer input of another dtype than `dtype` (indices) must stay within 0 and
	 * the largest value the op made (so that every index stays valid), else the run is refused
	 * with ERR_INVAL. */
	int (*fill_input)(void *ctx, struct spyre_tensor *t, int index);
	void *fill_ctx;
	/* NULL, or where a successful run moves the device's output (copied back to the host,
	 * in the op's output dtype): the caller finishes it. Chains runs, one's output feeding
	 * the next one's fill_input. */
	struct spyre_tensor *keep_output;
};

struct spyre_run_result {
	int passed;
	double max_abs_err, max_rel_err;
	double atol, rtol;
	uint64_t mismatches; /* elements outside atol + rtol * |ref| */
	char plan[SPYRE_PLAN_NAME_MAX];
	struct spyre_timing timing; /* of the chosen plan */
	int64_t out_shape[SPYRE_DIMS_MAX];
	int out_ndim;
	char digest[17]; /* FNV-1a 64 of the output's bytes, hex */
	/* host seconds spent planning (build, validate and time every candidate) and executing
	 * the chosen plan functionally: the emulator's own speed, for benchmarks */
	double plan_s, exec_s;
	/* the same two as CPU time of the calling thread: what they cost where other processes
	 * share the cores (wall time then counts the waits for a core too) */
	double plan_cpu_s, exec_cpu_s;
	int plan_cached; /* the choice came from the plan cache (memory or disk) */
};

/* One candidate plan and what the timing model says of it. */
struct spyre_plan_info {
	char name[SPYRE_PLAN_NAME_MAX];
	int valid; /* 0: refused by validation (why says so) */
	char why[160];
	uint64_t cycles;
	double modeled_us;
	double util_pe, util_vec, util_dma, util_ring;
	uint64_t lx_peak_bytes;
	uint64_t dev_bytes; /* read + written */
	uint64_t ring_bytes;
};

void spyre_run_opts_init(struct spyre_run_opts *o);
void spyre_run_default_tol(enum spyre_dtype dtype, const char *op, double *atol, double *rtol);

/* Runs and fills *res (spyre_run_result_finish() it; after an error there is nothing to
 * finish, and finishing is harmless). 0 when the run happened (res->passed
 * says whether the numbers agree), else an error: bad op, shapes or plan (ERR_INVAL), ... */
int spyre_run(const struct spyre_run_opts *o, struct spyre_run_result *res);
void spyre_run_result_finish(struct spyre_run_result *res);

/* spyre_run() remembers, per thread, which plan it chose for the last few (op, shapes, dtype,
 * parameters, hardware) and its modeled timing, so a repeated kernel case builds only that plan;
 * and execution keeps LX buffers. This frees both (before a worker thread ends). */
void spyre_run_release_caches(void);

/* Every candidate plan for the op on these shapes, timed (nothing is executed). *out is
 * malloc()ed; sorted by modeled time, invalid ones last. */
int spyre_run_plans(const struct spyre_run_opts *o, struct spyre_plan_info **out, size_t *n);

#endif
