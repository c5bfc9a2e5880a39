/* long-dl16: every one of the 2^32 fp32 inputs through spyre_dl16_from_f32 and its saturating
 * variant, against the slow reference of dl16_ref.c. Suite long: minutes, not for every run. */
#include <criterion/criterion.h>

#include <string.h>

#include "dl16_ref.h"
#include "spyre-emu/dl16.h"

Test(dl16_long, all_fp32_inputs)
{
	uint64_t checked = 0;
	uint32_t bits = 0;
	do {
		float f;
		memcpy(&f, &bits, sizeof(f));
		uint16_t got = spyre_dl16_from_f32(f), want = ref_dl16_from_f32(f, false);
		if (got != want)
			cr_assert_fail("dl16_from_f32(0x%08x) = 0x%04x, reference 0x%04x", bits,
				       got, want);
		got = spyre_dl16_from_f32_sat(f);
		want = ref_dl16_from_f32(f, true);
		if (got != want)
			cr_assert_fail("dl16_from_f32_sat(0x%08x) = 0x%04x, reference 0x%04x", bits,
				       got, want);
		checked++;
	} while (++bits != 0);
	cr_assert_eq(checked, UINT64_C(1) << 32);
}
