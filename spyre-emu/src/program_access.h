/* Private to the program executors: the LX bytes one instruction reads and writes, as strided
 * blocks ("rows of len bytes, stride apart"). Validation (bounds, read-before-write), the
 * high-water mark and the timing model's dataflow all walk these, so the extent of every
 * instruction is defined once, here and in program.c. */
#ifndef SPYRE_EMU_PROGRAM_ACCESS_H
#define SPYRE_EMU_PROGRAM_ACCESS_H

#include <stdint.h>

#include "spyre-emu/program.h"

/* The stick size lx_peak assumes when it has no hardware description (docs/emu.md, sticks). */
#define PROGRAM_STICK_BYTES_DEFAULT 128

struct lx_access {
	uint64_t addr;   /* first byte */
	uint64_t len;    /* bytes per row (> 0 for a valid instruction) */
	uint64_t stride; /* bytes between row starts */
	uint64_t rows;   /* >= 1 */
};

#define INSN_READS_MAX (SPYRE_VEC_IN_MAX + 1)

struct insn_access {
	struct lx_access rd[INSN_READS_MAX];
	int nrd;
	struct lx_access wr;
	int nwr; /* 0 or 1 */
};

/* Fills `a` with what `in` reads and writes in LX. A VEC's kernel index must be valid (its
 * output shape comes from the kernel table); an invalid one is treated as elementwise. */
void program__access(const struct spyre_insn *in, uint32_t stick_bytes, struct insn_access *a);

/* One past the last byte of an access, saturating at UINT64_MAX (never wraps). */
uint64_t program__access_end(const struct lx_access *x);

/* Per core, the end of the highest LX range touched, with sticks of `stick_bytes`. */
void program__lx_peak(const struct spyre_launch *l, uint32_t stick_bytes,
		      uint64_t peak[SPYRE_CORES_MAX]);

/* A digest of how program `p` touches LX (opcodes and LX ranges, not device addresses), and
 * the exact comparison of two programs' patterns (program_pattern.c). */
uint64_t program__lx_pattern(const struct spyre_program *p, uint32_t stick_bytes);
int program__same_lx_pattern(const struct spyre_program *p, const struct spyre_program *q,
			     uint32_t stick_bytes);

/* Ring geometry: hops from `from` to `to` in the shorter direction (clockwise on a tie) and
 * that direction (0 clockwise, i -> i + 1; 1 counter-clockwise). */
int program__ring_hops(int ncores, int from, int to, int *dir);

#endif
