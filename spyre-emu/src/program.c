/* Per-core programs: building a launch (a bounded growable instruction array per core), the
 * opcode names, and the LX extent of every instruction (program_access.h), which validation,
 * the high-water mark and the timing model share. */
#include "spyre-emu/program.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "program_access.h"
#include "spyre-emu/kernels.h"

void spyre_launch_init(struct spyre_launch *l, int ncores)
{
	memset(l, 0, sizeof(*l));
	l->ncores = ncores;
}

void spyre_launch_finish(struct spyre_launch *l)
{
	for (int c = 0; c < SPYRE_CORES_MAX; c++)
		free(l->prog[c].insns);
	memset(l, 0, sizeof(*l));
}

int spyre_program_push(struct spyre_launch *l, int core, const struct spyre_insn *insn)
{
	if (core < 0 || core >= l->ncores || core >= SPYRE_CORES_MAX)
		return err_set(ERR_INVAL, "program push: core %d is not in the launch's %d cores",
			       core, l->ncores);
	struct spyre_program *p = &l->prog[core];
	if (p->n >= SPYRE_PROGRAM_INSNS_MAX)
		return err_set(ERR_LIMIT,
			       "program push: core %d has %zu instructions, the most allowed "
			       "(SPYRE_PROGRAM_INSNS_MAX)",
			       core, p->n);
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		if (cap > SPYRE_PROGRAM_INSNS_MAX)
			cap = SPYRE_PROGRAM_INSNS_MAX;
		struct spyre_insn *in = realloc(p->insns, cap * sizeof(*in));
		if (!in)
			return err_set(ERR_NOMEM, "program push: %zu instructions for core %d", cap,
				       core);
		p->insns = in;
		p->cap = cap;
	}
	p->insns[p->n++] = *insn;
	return 0;
}

const char *spyre_opcode_name(enum spyre_opcode op)
{
	static const char *const names[] = {
		[SPYRE_OP_DMA_LOAD] = "dma_load", [SPYRE_OP_DMA_STORE] = "dma_store",
		[SPYRE_OP_MATMUL] = "matmul",     [SPYRE_OP_VEC] = "vec",
		[SPYRE_OP_SEND] = "send",         [SPYRE_OP_RECV] = "recv",
		[SPYRE_OP_BARRIER] = "barrier",
	};
	return (unsigned)op < sizeof(names) / sizeof(names[0]) ? names[op] : "?";
}

static struct lx_access block(uint64_t addr, uint64_t len, uint64_t stride, uint64_t rows)
{
	/* Contiguous rows are one row: fewer pieces for every walker. */
	if (rows > 1 && stride == len && len <= UINT64_MAX / rows) {
		len *= rows;
		rows = 1;
	}
	if (rows <= 1)
		stride = len;
	return (struct lx_access){
		.addr = addr, .len = len, .stride = stride, .rows = rows ? rows : 1
	};
}

/* kernels.h conventions: input 0 of "where" is BOOL bytes; a "*_acc" kernel adds to what its
 * output holds, so it reads it too. */
static int kernel_reads_out(const struct spyre_kernel *k)
{
	size_t n = strlen(k->name);
	return n > 4 && strcmp(k->name + n - 4, "_acc") == 0;
}

static void access_vec(const struct spyre_vec *v, struct insn_access *a)
{
	const struct spyre_kernel *k =
	    v->kernel < spyre_kernels_count ? &spyre_kernels[v->kernel] : NULL;
	uint64_t isz = spyre_dtype_size(v->dtype), osz = spyre_dtype_size(v->out_dtype);
	int nin = v->nin <= SPYRE_VEC_IN_MAX ? v->nin : SPYRE_VEC_IN_MAX;
	for (int i = 0; i < nin; i++) {
		uint64_t sz = i == 0 && k && strcmp(k->name, "where") == 0 ? 1 : isz;
		uint64_t cols = (v->bcast_col >> i) & 1 ? 1 : v->cols;
		uint64_t rows = v->in_stride[i] == 0 ? 1 : v->rows;
		a->rd[a->nrd++] = block(v->in[i], cols * sz, (uint64_t)v->in_stride[i] * sz, rows);
	}
	enum spyre_kernel_shape shape = k ? k->shape : SPYRE_KSHAPE_ELEMENTWISE;
	uint64_t rows = v->rows, cols = v->cols;
	if (shape == SPYRE_KSHAPE_ROW_REDUCE)
		cols = 1;
	else if (shape == SPYRE_KSHAPE_COL_REDUCE)
		rows = 1;
	else if (shape == SPYRE_KSHAPE_TRANSPOSE)
		rows = v->cols, cols = v->rows;
	a->wr = block(v->out, cols * osz, (uint64_t)v->out_stride * osz, rows);
	a->nwr = 1;
	if (k && kernel_reads_out(k))
		a->rd[a->nrd++] = a->wr;
}

static void access_matmul(const struct spyre_matmul *mm, struct insn_access *a)
{
	uint64_t isz = spyre_dtype_size(mm->in_dtype), osz = spyre_dtype_size(mm->out_dtype);
	a->rd[a->nrd++] = block(mm->a, mm->k * isz, (uint64_t)mm->a_stride * isz, mm->m);
	if (mm->b_trans) /* B stored [n, k] */
		a->rd[a->nrd++] = block(mm->b, mm->k * isz, (uint64_t)mm->b_stride * isz, mm->n);
	else
		a->rd[a->nrd++] = block(mm->b, mm->n * isz, (uint64_t)mm->b_stride * isz, mm->k);
	a->wr = block(mm->c, mm->n * osz, (uint64_t)mm->c_stride * osz, mm->m);
	a->nwr = 1;
	if (mm->accumulate)
		a->rd[a->nrd++] = a->wr;
}

void program__access(const struct spyre_insn *in, uint32_t stick_bytes, struct insn_access *a)
{
	memset(a, 0, sizeof(*a));
	const struct spyre_dma *d = &in->u.dma;
	switch (in->op) {
	case SPYRE_OP_DMA_LOAD:
		a->wr = block(d->lx_addr, (uint64_t)d->sticks * stick_bytes, d->lx_stride, d->rows);
		a->nwr = 1;
		break;
	case SPYRE_OP_DMA_STORE:
		a->rd[a->nrd++] =
		    block(d->lx_addr, (uint64_t)d->sticks * stick_bytes, d->lx_stride, d->rows);
		break;
	case SPYRE_OP_MATMUL:
		access_matmul(&in->u.mm, a);
		break;
	case SPYRE_OP_VEC:
		access_vec(&in->u.vec, a);
		break;
	case SPYRE_OP_SEND:
		a->rd[a->nrd++] = block(in->u.ring.lx_addr, in->u.ring.bytes, 0, 1);
		break;
	case SPYRE_OP_RECV:
		a->wr = block(in->u.ring.lx_addr, in->u.ring.bytes, 0, 1);
		a->nwr = 1;
		break;
	case SPYRE_OP_BARRIER:
		break;
	}
}

uint64_t program__access_end(const struct lx_access *x)
{
	uint64_t r = x->rows - 1, span;
	if (r && x->stride > UINT64_MAX / r)
		return UINT64_MAX;
	span = r * x->stride;
	if (span > UINT64_MAX - x->addr || x->len > UINT64_MAX - x->addr - span)
		return UINT64_MAX;
	return x->addr + span + x->len;
}

void program__lx_peak(const struct spyre_launch *l, uint32_t stick_bytes,
		      uint64_t peak[SPYRE_CORES_MAX])
{
	for (int c = 0; c < SPYRE_CORES_MAX; c++) {
		peak[c] = 0;
		if (c >= l->ncores)
			continue;
		const struct spyre_program *p = &l->prog[c];
		for (size_t i = 0; i < p->n; i++) {
			struct insn_access a;
			program__access(&p->insns[i], stick_bytes, &a);
			for (int j = 0; j < a.nrd + a.nwr; j++) {
				uint64_t e = program__access_end(j < a.nrd ? &a.rd[j] : &a.wr);
				if (e > peak[c])
					peak[c] = e;
			}
		}
	}
}

void spyre_launch_lx_peak(const struct spyre_launch *l, uint64_t peak[SPYRE_CORES_MAX])
{
	program__lx_peak(l, PROGRAM_STICK_BYTES_DEFAULT, peak);
}

int program__ring_hops(int ncores, int from, int to, int *dir)
{
	int cw = ((to - from) % ncores + ncores) % ncores;
	int ccw = ncores - cw;
	*dir = ccw < cw;
	return ccw < cw ? ccw : cw;
}
