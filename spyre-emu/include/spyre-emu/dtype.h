/* Element types: host dtypes (as PyTorch names them) and the device formats they become.
 * Host float16 (IEEE half) and bfloat16 become DLFloat16 on the device; float32 stays fp32; integer
 * types stay integers of their own width (an emulator convenience: Spyre's documented integer
 * device format is int8, so wider integers are labelled an extension in docs/emu.md). */
#ifndef SPYRE_EMU_DTYPE_H
#define SPYRE_EMU_DTYPE_H

#include <stddef.h>

enum spyre_dtype {
	SPYRE_DTYPE_FLOAT16 = 0, /* host IEEE binary16 */
	SPYRE_DTYPE_FLOAT32,
	SPYRE_DTYPE_INT64,
	SPYRE_DTYPE_INT32,
	SPYRE_DTYPE_INT8,
	SPYRE_DTYPE_BOOL,     /* one byte, 0 or 1 */
	SPYRE_DTYPE_DL16,     /* device only: DLFloat16 */
	SPYRE_DTYPE_BFLOAT16, /* host bfloat16 (the top half of an fp32); DLFloat16 on the device */
	SPYRE_DTYPE_COUNT
};

/* Bytes of one element (host or device format). */
size_t spyre_dtype_size(enum spyre_dtype t);
/* "float16", "float32", "int64", "int32", "int8", "bool", "dlfloat16", "bfloat16". */
const char *spyre_dtype_name(enum spyre_dtype t);
/* Accepts the names above and PyTorch's aliases ("half", "float", "long", "int"); 0 or
 * ERR_INVAL naming the accepted names. */
int spyre_dtype_parse(enum spyre_dtype *out, const char *name);
/* The device format of a host dtype: FLOAT16 and BFLOAT16 -> DL16, others unchanged. */
enum spyre_dtype spyre_dtype_device(enum spyre_dtype host);
int spyre_dtype_is_float(enum spyre_dtype t);
/* A host dtype that becomes DL16 on the device (float16, bfloat16). */
int spyre_dtype_is_half(enum spyre_dtype t);

#endif
