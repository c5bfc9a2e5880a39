/* Element types and their names; see dtype.h. */
#include "spyre-emu/dtype.h"

#include <string.h>

#include "common/err.h"

static const struct {
	const char *name;
	size_t size;
} dtypes[SPYRE_DTYPE_COUNT] = {
	[SPYRE_DTYPE_FLOAT16] = { "float16", 2 }, [SPYRE_DTYPE_FLOAT32] = { "float32", 4 },
	[SPYRE_DTYPE_INT64] = { "int64", 8 },     [SPYRE_DTYPE_INT32] = { "int32", 4 },
	[SPYRE_DTYPE_INT8] = { "int8", 1 },       [SPYRE_DTYPE_BOOL] = { "bool", 1 },
	[SPYRE_DTYPE_DL16] = { "dlfloat16", 2 },  [SPYRE_DTYPE_BFLOAT16] = { "bfloat16", 2 },
};

size_t spyre_dtype_size(enum spyre_dtype t)
{
	return (unsigned)t < SPYRE_DTYPE_COUNT ? dtypes[t].size : 0;
}

const char *spyre_dtype_name(enum spyre_dtype t)
{
	return (unsigned)t < SPYRE_DTYPE_COUNT ? dtypes[t].name : "?";
}

int spyre_dtype_parse(enum spyre_dtype *out, const char *name)
{
	static const struct {
		const char *alias;
		enum spyre_dtype t;
	} aliases[] = { { "half", SPYRE_DTYPE_FLOAT16 },  { "fp16", SPYRE_DTYPE_FLOAT16 },
			{ "float", SPYRE_DTYPE_FLOAT32 }, { "fp32", SPYRE_DTYPE_FLOAT32 },
			{ "long", SPYRE_DTYPE_INT64 },    { "int", SPYRE_DTYPE_INT32 },
			{ "dl16", SPYRE_DTYPE_DL16 },     { "bf16", SPYRE_DTYPE_BFLOAT16 } };
	for (int i = 0; i < SPYRE_DTYPE_COUNT; i++)
		if (strcmp(name, dtypes[i].name) == 0) {
			*out = (enum spyre_dtype)i;
			return 0;
		}
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(name, aliases[i].alias) == 0) {
			*out = aliases[i].t;
			return 0;
		}
	return err_set(ERR_INVAL,
		       "unknown dtype '%.32s' (expected float16, bfloat16, float32, int64, int32, "
		       "int8 or bool)",
		       name);
}

enum spyre_dtype spyre_dtype_device(enum spyre_dtype host)
{
	return spyre_dtype_is_half(host) ? SPYRE_DTYPE_DL16 : host;
}

int spyre_dtype_is_float(enum spyre_dtype t)
{
	return t == SPYRE_DTYPE_FLOAT16 || t == SPYRE_DTYPE_FLOAT32 || t == SPYRE_DTYPE_DL16 ||
	       t == SPYRE_DTYPE_BFLOAT16;
}

int spyre_dtype_is_half(enum spyre_dtype t)
{
	return t == SPYRE_DTYPE_FLOAT16 || t == SPYRE_DTYPE_BFLOAT16;
}
