/* How a core's program touches LX, apart from where it goes in device memory: its opcodes, and
 * for each instruction the LX ranges it reads and writes (program_access.h). Most plans give
 * every core the same pattern on its own share of the tensors; the checks and the timing
 * model's dataflow depend only on the pattern, so they run once per distinct one. */
#include <string.h>

#include "program_access.h"

static void mix(uint64_t *h, uint64_t v)
{
	*h = (*h ^ v) * 1099511628211ull;
}

static void mix_access(uint64_t *h, const struct lx_access *x)
{
	mix(h, x->addr);
	mix(h, x->len ^ x->stride << 32);
	mix(h, x->rows);
}

uint64_t program__lx_pattern(const struct spyre_program *p, uint32_t stick_bytes)
{
	uint64_t h = 1469598103934665603ull ^ p->n;
	for (size_t i = 0; i < p->n; i++) {
		struct insn_access a;
		program__access(&p->insns[i], stick_bytes, &a);
		mix(&h, (uint64_t)p->insns[i].op << 8 | (uint64_t)a.nrd << 1 | (uint64_t)a.nwr);
		for (int j = 0; j < a.nrd; j++)
			mix_access(&h, &a.rd[j]);
		if (a.nwr)
			mix_access(&h, &a.wr);
	}
	return h;
}

static int same_access(const struct lx_access *x, const struct lx_access *y)
{
	return x->addr == y->addr && x->len == y->len && x->stride == y->stride &&
	       x->rows == y->rows;
}

int program__same_lx_pattern(const struct spyre_program *p, const struct spyre_program *q,
			     uint32_t stick_bytes)
{
	if (p->n != q->n)
		return 0;
	for (size_t i = 0; i < p->n; i++) {
		struct insn_access a, b;
		if (p->insns[i].op != q->insns[i].op)
			return 0;
		program__access(&p->insns[i], stick_bytes, &a);
		program__access(&q->insns[i], stick_bytes, &b);
		if (a.nrd != b.nrd || a.nwr != b.nwr || (a.nwr && !same_access(&a.wr, &b.wr)))
			return 0;
		for (int j = 0; j < a.nrd; j++)
			if (!same_access(&a.rd[j], &b.rd[j]))
				return 0;
	}
	return 1;
}
