/* Fuzz target: the hardware description parser. Invariants: it never crashes, never reads past
 * the input (the text is copied into a buffer of exactly its size, with no NUL after it), and
 * a description it accepts has every key (pe_simd_lanes is optional), with values inside their
 * ranges. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "fuzz.h"
#include "spyre-emu/hw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	struct spyre_hw hw;
	int rc = spyre_hw_parse(&hw, text, size, "fuzz");
	free(text);
	if (rc != 0) {
		if (err_last()[0] == '\0')
			abort(); /* every refusal says why */
		return 0;
	}
	if (hw.cores < 1 || hw.cores > SPYRE_CORES_MAX || hw.stick_bytes != 128 ||
	    hw.window_bytes > hw.dev_mem_bytes || !(hw.clock_ghz > 0) || hw.pe_simd_lanes < 1 ||
	    hw.nparams != 16u + (spyre_hw_param_find(&hw, "pe_simd_lanes") != NULL))
		abort();
	for (size_t i = 0; i < hw.nparams; i++) {
		const struct spyre_hw_param *p = &hw.params[i];
		if (p->label == SPYRE_HW_FACT && p->source[0] == '\0')
			abort();
		if (spyre_hw_param_find(&hw, p->key) != p)
			abort();
	}
	return 0;
}
