/* Op adapters: an op the emulator lacks, rewritten into a small expression of ops it has
 * (`softsign(x)` -> `div(x, add(abs(x), 1))`), from a declarative YAML table kept beside the
 * specs (testspecs/specs/adapters/adapters.yaml). A case whose op the emulator lacks runs its
 * adapter's expression and is compared with the ORIGINAL op's float64 reference (a C function
 * per op, in adapters_ref.c); its result names the adapter.
 *
 * The table:
 *   adapters:
 *     - name: softsign                       # what results say: "via adapter softsign"
 *       ops: [softsign, nn.functional.softsign] # upstream names the case may carry
 *       reference: softsign                  # the float64 reference of the original op
 *       inputs: [x]                          # names, in the case's input order
 *       init: [randn]                        # per input, when the case gives none
 *       dtypes: [float16, float32]           # optional: only these
 *       exponent: [2, 3, 4]                  # optional: only these `params.exponent` values
 *       expr: div(x, add(abs(x), 1))
 * An expression is a call `op(arg, ...)` of an emulator op, an input name, a number, or the
 * name `exponent` (the case's exponent parameter). Numbers become one-element tensors that
 * broadcast, except the bounds of `clamp(e, lo, hi)` and the exponent of `pow(e, k)`, which
 * become the op's parameters.
 *
 * How a step runs: spyre-emu's public interface (run.h) runs an op only on inputs it makes
 * itself, so an expression cannot be chained through it. Each step is therefore computed from
 * its inputs as stored with the emulator's own float64 op reference (spyre_op_reference), the
 * result rounded to the device format (DL16 for float16), and timed by the emulator's planner
 * (spyre_run_plans: the fastest valid plan of that step on those shapes). The modeled device
 * time of the case is the sum over steps. */
#ifndef EXECUTORS_ADAPTERS_H
#define EXECUTORS_ADAPTERS_H

#include <stddef.h>

#include "executors/case.h"
#include "spyre-emu/hw.h"

#define EXEC_ADAPTERS_MAX       64    /* adapters in one table */
#define EXEC_ADAPTER_OPS_MAX    8     /* upstream names of one adapter */
#define EXEC_ADAPTER_EXPR_MAX   256   /* bytes of one expression */
#define EXEC_ADAPTER_NODES_MAX  24    /* calls, names and numbers in one expression */
#define EXEC_ADAPTER_DEPTH_MAX  8     /* nesting of calls */
#define EXEC_ADAPTER_FILE_MAX   65536 /* bytes of the table file */
#define EXEC_ADAPTER_VALUES_MAX 8     /* values of an `exponent` condition */

struct exec_adapter;
struct exec_adapters;

/* Loads a table; ERR_INVAL with "file:line:col: what" for anything malformed (an unknown op in
 * an expression, an unknown reference, an input the expression does not name). */
int exec_adapters_load(struct exec_adapters **out, const char *path);
/* The same from bytes; `name` is used in messages. */
int exec_adapters_parse(struct exec_adapters **out, const char *data, size_t len, const char *name);
void exec_adapters_destroy(struct exec_adapters *t);
/* The bytes the table was parsed from (*len of them; NULL and 0 for NULL): a pool worker that
 * is another process image parses them again. */
const char *exec_adapters_source(const struct exec_adapters *t, size_t *len);
size_t exec_adapters_count(const struct exec_adapters *t);
const struct exec_adapter *exec_adapters_at(const struct exec_adapters *t, size_t i);
const char *exec_adapter_name(const struct exec_adapter *a);

/* The adapter for a case the emulator cannot run natively (its op, dtype, input count and
 * exponent fit), or NULL. */
const struct exec_adapter *exec_adapters_find(const struct exec_adapters *t,
					      const struct exec_case *c);

/* The table of a set of spec paths: adapters/adapters.yaml in the first path that is a directory
 * holding one, or beside the first file that has one. *out NULL when none; 0 or the loader's
 * error. */
int exec_adapters_load_beside(struct exec_adapters **out, const char *const *paths, size_t n);

/* How cases would run: natively (the emulator has the op and dtype and the specs let it run),
 * through an adapter, or not at all. `t` may be NULL. 0, or ERR_INVAL for a case that does not
 * flatten. */
struct exec_kind_counts {
	size_t native, adapted, unsupported;
};
int exec_adapters_count_kinds(const struct exec_adapters *t, const struct spec_case *cases,
			      size_t n, struct exec_kind_counts *out);

/* Runs the case through the adapter (see above) and fills the outcome, errors, modeled time
 * and plan ("adapter softsign: abs+add+div"). */
void exec_adapter_run(const struct exec_adapter *a, const struct exec_case *c,
		      const struct spyre_hw *hw, struct exec_result *r);

/* The original op's float64 reference by name ("softsign", "hypot", ...), numpy broadcasting
 * over the inputs: *out malloc()ed with the broadcast shape's elements. ERR_NOTFOUND for an
 * unknown name, ERR_INVAL for shapes that do not broadcast. `exponent` is for pow. */
int exec_reference(const char *name, const struct spyre_tensor *in, int nin, double exponent,
		   double **out, uint64_t *n);
/* Whether exec_reference() knows `name`, and how many inputs it takes. */
int exec_reference_nin(const char *name);

#endif
