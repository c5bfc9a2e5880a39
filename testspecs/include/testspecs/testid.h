/* Upstream test ids, as pytest and PyTorch's device-generic machinery name them:
 *   test/test_binary_ufuncs.py::TestBinaryUfuncsPRIVATEUSE1::test_add_spyre_float16
 *   test/test_torch.py::TestTorch::test_Size           (path relative to TORCH_ROOT)
 *   TestTorch::test_Size                               (no path)
 *   test_Size                                          (method only)
 * A device-generic class carries the suffix PRIVATEUSE1 (or the device's name in capitals, as
 * torch-spyre's setUpClass notes can happen); its methods end in `_<device>` or
 * `_<device>_<dtype>`, and ops-parametrised ones carry the op between the base name and the
 * device (`test_foo_add_spyre_float16`: base `test_foo`, op `add`). Which part is the base and
 * which the op is known only against a spec name, so the op is split off at match time
 * (testspecs_testid_op). The suffix is stripped only from a device-generic class's methods, or
 * from a method-only id. */
#ifndef TESTSPECS_TESTID_H
#define TESTSPECS_TESTID_H

#include <stddef.h>

#define SPEC_TESTID_MAX     1024 /* bytes of one test id */
#define SPEC_DEVICE_DEFAULT "spyre"

struct spec_test_id {
	char path[SPEC_TESTID_MAX];     /* "" when the id has none */
	char cls[SPEC_TESTID_MAX];      /* as written, "" when none */
	char base_cls[SPEC_TESTID_MAX]; /* without the PRIVATEUSE1 suffix */
	char method[SPEC_TESTID_MAX];   /* as written */
	char stem[SPEC_TESTID_MAX];     /* method without `_<device>[_<dtype>]`: base (+ `_op`) */
	char device[64];                /* "" when not device-generic */
	char dtype[64];                 /* "" when the name carries none */
	int device_generic;             /* 1 when the class suffix or method suffix was found */
};

/* Parses `text` into `out`. `device` is the backend name in method suffixes (NULL: "spyre";
 * "privateuse1" is accepted too). ERR_INVAL for an empty part or too many `::`, ERR_LIMIT for an
 * id longer than SPEC_TESTID_MAX. */
int testspecs_testid_parse(struct spec_test_id *out, const char *text, const char *device);

/* The op of an ops-parametrised test once `base_len` bytes of `stem` are known to be the base
 * name: the rest after the `_`, or NULL when the stem is exactly the base. */
const char *testspecs_testid_op(const struct spec_test_id *id, size_t base_len);

/* 1 when `name` is a dtype name the device-generic suffix may carry (float16, bfloat16, int64,
 * complex64, bool, float8_e4m3fn, ...). */
int testspecs_dtype_known(const char *name);

/* The dtype names, NULL-terminated, longest first (the order suffixes are tried in). */
const char *const *testspecs_dtype_names(void);

#endif
