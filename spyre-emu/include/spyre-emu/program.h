/* Per-core programs: what the planner produces and both executors (functional and timing)
 * consume. One instruction stream per core; a launch is one program per core. Instructions:
 *  - DMA_LOAD / DMA_STORE move whole sticks between device memory and the core's LX
 *    scratchpad, `rows` runs of `sticks` sticks each, with a row stride on each side;
 *  - MATMUL on LX tiles (the PE array): C[m,n] (+)= A[m,k] @ B[k,n], products exact, fp32
 *    accumulation;
 *  - VEC runs a vector-unit kernel (kernels.h) over an LX tile;
 *  - SEND / RECV move bytes between the LX of two cores over the ring, matched in order per
 *    (sender, receiver) pair;
 *  - BARRIER: every core of the launch waits until all have reached their n-th barrier.
 * A program is validated before it runs (spyre_launch_validate): LX bounds per core, stick
 * alignment, the device-memory addressing window, ring peers and matching, barrier counts, and
 * that every LX byte an instruction reads was written before. A bad program is rejected with
 * an error naming core and instruction index; it never runs. */
#ifndef SPYRE_EMU_PROGRAM_H
#define SPYRE_EMU_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "spyre-emu/dtype.h"
#include "spyre-emu/hw.h"

#define SPYRE_VEC_IN_MAX  3
#define SPYRE_VEC_SCALARS 4

enum spyre_opcode {
	SPYRE_OP_DMA_LOAD,  /* device -> LX */
	SPYRE_OP_DMA_STORE, /* LX -> device */
	SPYRE_OP_MATMUL,
	SPYRE_OP_VEC,
	SPYRE_OP_SEND,
	SPYRE_OP_RECV,
	SPYRE_OP_BARRIER,
};

struct spyre_dma {
	uint64_t dev_addr;   /* stick-aligned */
	uint32_t lx_addr;    /* stick-aligned */
	uint32_t sticks;     /* sticks per row (contiguous on both sides) */
	uint32_t rows;       /* >= 1 */
	uint64_t dev_stride; /* bytes between rows in device memory, stick multiple */
	uint32_t lx_stride;  /* bytes between rows in LX, stick multiple */
};

struct spyre_matmul {
	uint32_t a, b, c;                      /* LX byte offsets */
	uint32_t m, k, n;                      /* logical sizes */
	uint32_t a_stride, b_stride, c_stride; /* elements between rows */
	enum spyre_dtype in_dtype;             /* DL16 or FLOAT32 (A and B) */
	enum spyre_dtype out_dtype;            /* FLOAT32 accumulators */
	uint8_t accumulate;                    /* 1: C += A @ B; 0: C = A @ B */
	uint8_t b_trans; /* 1: B is stored [n, k] (b_stride between its n rows): C = A @ B^T */
};

/* Operand shapes: an input with stride 0 is the same row for every row (row broadcast); an
 * input whose bit is set in bcast_col uses element 0 of each of its rows for every column. */
struct spyre_vec {
	uint16_t kernel; /* index into spyre_kernels[] */
	uint8_t nin;
	uint8_t bcast_col;          /* bit i: input i is one value per row */
	enum spyre_dtype dtype;     /* element format of the inputs in LX */
	enum spyre_dtype out_dtype; /* element format of the output in LX */
	uint32_t in[SPYRE_VEC_IN_MAX];
	uint32_t in_stride[SPYRE_VEC_IN_MAX]; /* elements */
	uint32_t out, out_stride;
	uint32_t rows, cols;
	float scalar[SPYRE_VEC_SCALARS]; /* kernel parameters (exponent, clamp bounds, eps, ...) */
};

struct spyre_ring {
	int peer;         /* the other core */
	uint32_t lx_addr; /* source (SEND) or destination (RECV) */
	uint32_t bytes;
};

struct spyre_insn {
	enum spyre_opcode op;
	union {
		struct spyre_dma dma;
		struct spyre_matmul mm;
		struct spyre_vec vec;
		struct spyre_ring ring;
	} u;
};

struct spyre_program {
	struct spyre_insn *insns;
	size_t n, cap;
};

struct spyre_launch {
	int ncores;
	struct spyre_program prog[SPYRE_CORES_MAX];
	char plan[64]; /* name of the plan that produced it */
};

void spyre_launch_init(struct spyre_launch *l, int ncores);
void spyre_launch_finish(struct spyre_launch *l);
/* Appends to core's program; ERR_NOMEM or ERR_LIMIT (SPYRE_PROGRAM_INSNS_MAX). */
int spyre_program_push(struct spyre_launch *l, int core, const struct spyre_insn *insn);

/* Checks the launch against the hardware; 0, or ERR_INVAL with err_last() like
 * "core 3 insn 17 (dma_load): LX range [2097024, 2097280) is past the 2097152-byte LX". */
int spyre_launch_validate(const struct spyre_launch *l, const struct spyre_hw *hw);

/* Per core, the highest LX byte any instruction touches (the high-water mark). */
void spyre_launch_lx_peak(const struct spyre_launch *l, uint64_t peak[SPYRE_CORES_MAX]);

const char *spyre_opcode_name(enum spyre_opcode op);

struct spyre_device;
/* Runs a validated launch functionally on the device's memory (each core has its own LX). */
int spyre_launch_execute(const struct spyre_launch *l, struct spyre_device *dev);
/* Execution keeps each thread's LX buffers and tile scratch for the next launch (a launch never
 * reads LX it did not write); this frees them, e.g. before a worker thread ends. */
void spyre_launch_release_buffers(void);

#endif
