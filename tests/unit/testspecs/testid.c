/* Upstream test ids: path, class, method, and the device-generic suffixes. */
#include <criterion/criterion.h>
#include <string.h>

#include "common/err.h"
#include "testspecs/testid.h"

Test(testid, path_class_method)
{
	struct spec_test_id id;
	cr_assert_eq(testspecs_testid_parse(&id, "test/test_torch.py::TestTorch::test_Size", NULL),
		     0);
	cr_assert_str_eq(id.path, "test/test_torch.py");
	cr_assert_str_eq(id.cls, "TestTorch");
	cr_assert_str_eq(id.base_cls, "TestTorch");
	cr_assert_str_eq(id.method, "test_Size");
	cr_assert_str_eq(id.stem, "test_Size");
	cr_assert_eq(id.device_generic, 0);
}

Test(testid, method_only_and_class_method)
{
	struct spec_test_id id;
	cr_assert_eq(testspecs_testid_parse(&id, "test_Size", NULL), 0);
	cr_assert_str_eq(id.path, "");
	cr_assert_str_eq(id.cls, "");
	cr_assert_str_eq(id.method, "test_Size");
	cr_assert_eq(testspecs_testid_parse(&id, "TestTorch::test_Size", NULL), 0);
	cr_assert_str_eq(id.cls, "TestTorch");
	cr_assert_eq(testspecs_testid_parse(&id, "tests/x.py::test_fn", NULL), 0);
	cr_assert_str_eq(id.path, "tests/x.py");
	cr_assert_str_eq(id.cls, "");
	cr_assert_str_eq(id.method, "test_fn");
}

Test(testid, device_generic)
{
	struct spec_test_id id;
	cr_assert_eq(
	    testspecs_testid_parse(&id,
				   "test/test_binary_ufuncs.py::TestBinaryUfuncsPRIVATEUSE1::"
				   "test_add_spyre_float16",
				   NULL),
	    0);
	cr_assert_str_eq(id.base_cls, "TestBinaryUfuncs");
	cr_assert_str_eq(id.stem, "test_add");
	cr_assert_str_eq(id.device, "spyre");
	cr_assert_str_eq(id.dtype, "float16");
	cr_assert_eq(id.device_generic, 1);
	/* bfloat16 is not read as float16 */
	cr_assert_eq(
	    testspecs_testid_parse(&id, "TestFooPRIVATEUSE1::test_bar_spyre_bfloat16", NULL), 0);
	cr_assert_str_eq(id.dtype, "bfloat16");
	cr_assert_str_eq(id.stem, "test_bar");
	/* no dtype */
	cr_assert_eq(testspecs_testid_parse(&id, "TestFooPRIVATEUSE1::test_bar_spyre", NULL), 0);
	cr_assert_str_eq(id.stem, "test_bar");
	cr_assert_str_eq(id.dtype, "");
	/* ops-parametrised: the op stays in the stem until a spec name says where the base ends */
	cr_assert_eq(
	    testspecs_testid_parse(&id, "TestFooPRIVATEUSE1::test_foo_add_spyre_float16", NULL), 0);
	cr_assert_str_eq(id.stem, "test_foo_add");
	cr_assert_str_eq(testspecs_testid_op(&id, strlen("test_foo")), "add");
	cr_assert_null(testspecs_testid_op(&id, strlen("test_foo_add")));
	/* the class suffix in the device's capitals */
	cr_assert_eq(testspecs_testid_parse(&id, "TestOldViewOpsSPYRE::test_x_spyre_int64", NULL),
		     0);
	cr_assert_str_eq(id.base_cls, "TestOldViewOps");
	cr_assert_str_eq(id.dtype, "int64");
	/* another device name */
	cr_assert_eq(testspecs_testid_parse(&id, "TPRIVATEUSE1::test_x_aiu_float32", "aiu"), 0);
	cr_assert_str_eq(id.stem, "test_x");
}

Test(testid, suffix_kept_outside_device_generic_classes)
{
	struct spec_test_id id;
	cr_assert_eq(testspecs_testid_parse(&id, "TestPlain::test_x_spyre_float16", NULL), 0);
	cr_assert_str_eq(id.stem, "test_x_spyre_float16");
	cr_assert_eq(id.device_generic, 0);
}

Test(testid, errors)
{
	struct spec_test_id id;
	cr_assert_eq(testspecs_testid_parse(&id, "", NULL), ERR_INVAL);
	cr_assert_eq(testspecs_testid_parse(&id, "A::::b", NULL), ERR_INVAL);
	cr_assert_eq(testspecs_testid_parse(&id, "A::", NULL), ERR_INVAL);
	char big[SPEC_TESTID_MAX + 8];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	cr_assert_eq(testspecs_testid_parse(&id, big, NULL), ERR_LIMIT);
	cr_assert(testspecs_dtype_known("float8_e4m3fn"));
	cr_assert_not(testspecs_dtype_known("float17"));
}
