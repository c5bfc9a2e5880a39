/* Tests of spyre-emu/dtype. */
#include <criterion/criterion.h>

#include "common/err.h"
#include "spyre-emu/dtype.h"

Test(dtype, names_round_trip)
{
	for (int i = 0; i < SPYRE_DTYPE_COUNT; i++) {
		enum spyre_dtype t;
		cr_assert_eq(spyre_dtype_parse(&t, spyre_dtype_name((enum spyre_dtype)i)), 0);
		cr_expect_eq((int)t, i);
		cr_expect_gt(spyre_dtype_size(t), 0);
	}
}

Test(dtype, aliases_and_errors)
{
	enum spyre_dtype t;
	cr_expect_eq(spyre_dtype_parse(&t, "half"), 0);
	cr_expect_eq(t, SPYRE_DTYPE_FLOAT16);
	cr_expect_eq(spyre_dtype_parse(&t, "long"), 0);
	cr_expect_eq(t, SPYRE_DTYPE_INT64);
	cr_expect_eq(spyre_dtype_parse(&t, "bfloat16"), 0);
	cr_expect_eq(spyre_dtype_device(t), SPYRE_DTYPE_DL16);
	cr_expect_eq(spyre_dtype_size(t), 2);
	cr_expect(spyre_dtype_is_float(t));
	cr_expect_eq(spyre_dtype_parse(&t, "complex64"), ERR_INVAL);
	cr_expect_eq(spyre_dtype_device(SPYRE_DTYPE_FLOAT16), SPYRE_DTYPE_DL16);
	cr_expect_eq(spyre_dtype_device(SPYRE_DTYPE_FLOAT32), SPYRE_DTYPE_FLOAT32);
	cr_expect_eq(spyre_dtype_size(SPYRE_DTYPE_DL16), 2);
}
