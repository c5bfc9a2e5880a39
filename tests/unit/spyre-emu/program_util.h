/* Builders shared by the program and timing tests: instructions, a launch on the shipped
 * hardware, and device buffers to DMA from. */
#ifndef TESTS_SPYRE_EMU_PROGRAM_UTIL_H
#define TESTS_SPYRE_EMU_PROGRAM_UTIL_H

#include <criterion/criterion.h>
#include <string.h>

#include "common/err.h"
#include "spyre-emu/hw.h"
#include "spyre-emu/kernels.h"
#include "spyre-emu/program.h"

static inline struct spyre_hw tu_hw(void)
{
	struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_default(&hw), 0, "%s", err_last());
	return hw;
}

static inline struct spyre_insn tu_dma(enum spyre_opcode op, uint64_t dev, uint32_t lx,
				       uint32_t sticks, uint32_t rows)
{
	struct spyre_insn in = { .op = op };
	in.u.dma = (struct spyre_dma){ .dev_addr = dev,
				       .lx_addr = lx,
				       .sticks = sticks,
				       .rows = rows,
				       .dev_stride = (uint64_t)sticks * 128,
				       .lx_stride = sticks * 128 };
	return in;
}

static inline struct spyre_insn tu_ring(enum spyre_opcode op, int peer, uint32_t lx, uint32_t bytes)
{
	struct spyre_insn in = { .op = op };
	in.u.ring = (struct spyre_ring){ .peer = peer, .lx_addr = lx, .bytes = bytes };
	return in;
}

static inline struct spyre_insn tu_barrier(void)
{
	return (struct spyre_insn){ .op = SPYRE_OP_BARRIER };
}

/* C[m,n] = A[m,k] @ B[k,n], dense rows. */
static inline struct spyre_insn tu_mm(uint32_t a, uint32_t b, uint32_t c, uint32_t m, uint32_t k,
				      uint32_t n, enum spyre_dtype in_dtype, int acc)
{
	struct spyre_insn in = { .op = SPYRE_OP_MATMUL };
	in.u.mm = (struct spyre_matmul){ .a = a,
					 .b = b,
					 .c = c,
					 .m = m,
					 .k = k,
					 .n = n,
					 .a_stride = k,
					 .b_stride = n,
					 .c_stride = n,
					 .in_dtype = in_dtype,
					 .out_dtype = SPYRE_DTYPE_FLOAT32,
					 .accumulate = (uint8_t)acc };
	return in;
}

/* One-input kernel `name` over rows x cols float32, dense. */
static inline struct spyre_insn tu_vec1(const char *name, uint32_t in, uint32_t out, uint32_t rows,
					uint32_t cols)
{
	int k = spyre_kernel_find(name);
	cr_assert_geq(k, 0, "kernel %s", name);
	struct spyre_insn x = { .op = SPYRE_OP_VEC };
	x.u.vec = (struct spyre_vec){ .kernel = (uint16_t)k,
				      .nin = 1,
				      .dtype = SPYRE_DTYPE_FLOAT32,
				      .out_dtype = SPYRE_DTYPE_FLOAT32,
				      .in = { in },
				      .in_stride = { cols },
				      .out = out,
				      .out_stride = cols,
				      .rows = rows,
				      .cols = cols };
	return x;
}

static inline void tu_push(struct spyre_launch *l, int core, struct spyre_insn in)
{
	cr_assert_eq(spyre_program_push(l, core, &in), 0, "%s", err_last());
}

/* Validation fails with ERR_INVAL and a message that contains `want`. */
#define tu_refused(l, hw, want)                                                                    \
	do {                                                                                       \
		cr_assert_eq(spyre_launch_validate((l), (hw)), ERR_INVAL, "accepted; want %s",     \
			     (want));                                                              \
		cr_expect(strstr(err_last(), (want)) != NULL, "message \"%s\" lacks \"%s\"",       \
			  err_last(), (want));                                                     \
	} while (0)

#endif
