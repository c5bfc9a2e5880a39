/* Fuzz target: a spec tensor's init_args text (flow YAML as the loader keeps it) read by
 * exec_init_args_parse, then used: randint over a small int64 tensor, made distinct as
 * index_copy_'s index is. Invariants: no crash, no leak; a refused text is ERR_INVAL with a
 * message; accepted values stay in [low, high) and, made distinct, repeat nowhere. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "executors/inputs.h"
#include "fuzz.h"

static void use(const struct exec_init_args *a)
{
	struct spyre_tensor t;
	int64_t shape[] = { 4, 5 };
	if (spyre_tensor_alloc(&t, SPYRE_DTYPE_INT64, shape, 2))
		return;
	if (exec_inputs_fill_args(&t, "randint", a, 7, 0) != 0)
		abort();
	for (uint64_t i = 0; i < 20; i++) {
		double v = spyre_tensor_get(&t, i);
		if (v < a->low || v >= a->high)
			abort();
	}
	int rc = a->high - a->low < 1e6 ? exec_inputs_make_distinct(&t, a) : 0;
	if (rc && rc != ERR_INVAL)
		abort();
	for (uint64_t i = 0; !rc && a->high - a->low < 1e6 && i < 20; i++)
		for (uint64_t j = 0; j < i; j++)
			if (spyre_tensor_get(&t, i) == spyre_tensor_get(&t, j))
				abort();
	spyre_tensor_finish(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct exec_init_args a = { 0 };
	int rc = exec_init_args_parse(&a, text);
	if (rc && (rc != ERR_INVAL || !err_last()[0]))
		abort();
	if (!rc && a.has_range && (!(a.low < a.high) || a.high > 0x1p53 || a.low < -0x1p53))
		abort();
	if (!rc && a.has_range)
		use(&a);
	err_clear();
	free(text);
	return 0;
}
