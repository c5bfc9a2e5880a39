/* Validation of a launch against the hardware (spyre_launch_validate): everything that can be
 * checked without running it. Per core, in program order: sizes, dtypes and kernel arity,
 * stick alignment of DMAs, LX bounds of every range read or written, the device-memory
 * addressing window, ring peers, and that every LX byte read was written before (an interval
 * set of the bytes written so far). Across cores: SEND/RECV matched in order per (sender,
 * receiver) pair with equal sizes, and the same number of barriers everywhere. The first
 * error wins and names core, instruction index and opcode. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "program_access.h"
#include "spyre-emu/kernels.h"
#include "spyre-emu/program.h"

/* ---- a compact set of byte intervals: sorted, disjoint, never touching ---- */

struct ivset {
	uint64_t (*iv)[2]; /* [lo, hi) */
	size_t n, cap;
};

/* Index of the first interval whose hi is >= x (where x may join or sit inside). */
static size_t ivset_find(const struct ivset *s, uint64_t x)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->iv[mid][1] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int ivset_add(struct ivset *s, uint64_t lo, uint64_t hi)
{
	size_t i = ivset_find(s, lo), j = i;
	while (j < s->n && s->iv[j][0] <= hi) { /* overlapping or touching: merge */
		if (s->iv[j][0] < lo)
			lo = s->iv[j][0];
		if (s->iv[j][1] > hi)
			hi = s->iv[j][1];
		j++;
	}
	if (j == i) { /* a new interval at i */
		if (s->n == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 64;
			void *p = realloc(s->iv, cap * sizeof(*s->iv));
			if (!p)
				return err_set(ERR_NOMEM, "validate: %zu LX intervals", cap);
			s->iv = p;
			s->cap = cap;
		}
		memmove(&s->iv[i + 1], &s->iv[i], (s->n - i) * sizeof(*s->iv));
		s->n++;
	} else if (j > i + 1) { /* i..j-1 become one */
		memmove(&s->iv[i + 1], &s->iv[j], (s->n - j) * sizeof(*s->iv));
		s->n -= j - i - 1;
	}
	s->iv[i][0] = lo;
	s->iv[i][1] = hi;
	return 0;
}

/* 1 when [lo, hi) is all inside the set; else 0 and *missing is its first byte not in it. */
static int ivset_covers(const struct ivset *s, uint64_t lo, uint64_t hi, uint64_t *missing)
{
	size_t i = ivset_find(s, lo + 1);
	if (i < s->n && s->iv[i][0] <= lo && s->iv[i][1] >= hi)
		return 1;
	*missing = (i < s->n && s->iv[i][0] <= lo) ? s->iv[i][1] : lo;
	return 0;
}

/* ---- per-core checks ---- */

struct vcore {
	const struct spyre_hw *hw;
	int core, ncores;
	size_t idx;
	const struct spyre_insn *in;
	struct ivset written;
	uint64_t dev_lo, dev_hi; /* device bytes touched so far; dev_hi == 0: none */
	size_t barriers;
};

static int bad(const struct vcore *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(const struct vcore *v, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(ERR_INVAL, "core %d insn %zu (%s): %s", v->core, v->idx,
		       spyre_opcode_name(v->in->op), msg);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* A core addresses one window of device memory at a time; a DMA outside the current window
 * moves it (the timing model charges a descriptor setup for that). What must hold is that one
 * transfer fits a window. */
static int check_window(struct vcore *v, uint64_t lo, uint64_t hi)
{
	if (hi - lo > v->hw->window_bytes)
		return bad(v,
			   "device bytes [%" PRIu64 ", %" PRIu64 ") span %" PRIu64
			   " bytes, more than the %" PRIu64 "-byte addressing window",
			   lo, hi, hi - lo, v->hw->window_bytes);
	uint64_t nlo = v->dev_hi && v->dev_lo < lo ? v->dev_lo : lo;
	uint64_t nhi = v->dev_hi > hi ? v->dev_hi : hi;
	if (nhi - nlo > v->hw->window_bytes)
		nlo = lo, nhi = hi; /* the window moves */
	v->dev_lo = nlo;
	v->dev_hi = nhi;
	return 0;
}

static int check_dma(struct vcore *v, const struct spyre_dma *d)
{
	uint64_t sb = v->hw->stick_bytes, row = (uint64_t)d->sticks * sb;
	if (d->sticks == 0 || d->rows == 0)
		return bad(v, "%" PRIu32 " sticks x %" PRIu32 " rows moves nothing", d->sticks,
			   d->rows);
	if (d->dev_addr % sb || d->lx_addr % sb || d->dev_stride % sb || d->lx_stride % sb)
		return bad(v,
			   "device address %" PRIu64 ", LX address %" PRIu32
			   ", device stride %" PRIu64 " and LX stride %" PRIu32
			   " must all be multiples of the %" PRIu64 "-byte stick",
			   d->dev_addr, d->lx_addr, d->dev_stride, d->lx_stride, sb);
	if (d->rows > 1 && d->lx_stride < row)
		return bad(v, "LX stride %" PRIu32 " is less than a row of %" PRIu64 " bytes",
			   d->lx_stride, row);
	uint64_t hi = sat_add(sat_add(d->dev_addr, sat_mul(d->rows - 1, d->dev_stride)), row);
	return check_window(v, d->dev_addr, hi);
}

static int check_matmul(struct vcore *v, const struct spyre_matmul *mm)
{
	if (mm->m == 0 || mm->k == 0 || mm->n == 0)
		return bad(v, "empty matmul %" PRIu32 "x%" PRIu32 " @ %" PRIu32 "x%" PRIu32, mm->m,
			   mm->k, mm->k, mm->n);
	if (mm->in_dtype != SPYRE_DTYPE_DL16 && mm->in_dtype != SPYRE_DTYPE_FLOAT32)
		return bad(v, "input dtype %s; the PE array takes dlfloat16 or float32",
			   spyre_dtype_name(mm->in_dtype));
	if (mm->out_dtype != SPYRE_DTYPE_FLOAT32)
		return bad(v, "output dtype %s; the PE array accumulates in float32",
			   spyre_dtype_name(mm->out_dtype));
	if (mm->a_stride < mm->k || mm->b_stride < (mm->b_trans ? mm->k : mm->n) ||
	    mm->c_stride < mm->n)
		return bad(v,
			   "row strides A %" PRIu32 ", B %" PRIu32 ", C %" PRIu32
			   " are shorter than their rows (%" PRIu32 ", %" PRIu32 ", %" PRIu32 ")",
			   mm->a_stride, mm->b_stride, mm->c_stride, mm->k, mm->n, mm->n);
	uint32_t isz = (uint32_t)spyre_dtype_size(mm->in_dtype);
	if (mm->a % isz || mm->b % isz || mm->c % 4)
		return bad(v,
			   "LX offsets A %" PRIu32 ", B %" PRIu32 ", C %" PRIu32
			   " are not aligned to their elements",
			   mm->a, mm->b, mm->c);
	struct insn_access a;
	program__access(v->in, v->hw->stick_bytes, &a);
	uint64_t clo = a.wr.addr, chi = program__access_end(&a.wr);
	for (int i = 0; i < 2; i++)
		if (a.rd[i].addr < chi && program__access_end(&a.rd[i]) > clo)
			return bad(v, "output C overlaps input %c", i ? 'B' : 'A');
	return 0;
}

static int check_vec(struct vcore *v, const struct spyre_vec *x)
{
	if (x->kernel >= spyre_kernels_count)
		return bad(v, "kernel index %u; there are %zu kernels", x->kernel,
			   spyre_kernels_count);
	const struct spyre_kernel *k = &spyre_kernels[x->kernel];
	if (x->nin != k->nin || x->nin > SPYRE_VEC_IN_MAX)
		return bad(v, "kernel %s takes %u inputs, not %u", k->name, k->nin, x->nin);
	if (x->rows == 0 || x->cols == 0)
		return bad(v, "kernel %s over %" PRIu32 "x%" PRIu32 " elements does nothing",
			   k->name, x->rows, x->cols);
	size_t isz = spyre_dtype_size(x->dtype), osz = spyre_dtype_size(x->out_dtype);
	if (isz == 0 || osz == 0)
		return bad(v, "kernel %s: bad dtype %d or out_dtype %d", k->name, (int)x->dtype,
			   (int)x->out_dtype);
	if (k->shape == SPYRE_KSHAPE_TRANSPOSE && x->dtype != x->out_dtype)
		return bad(v, "kernel %s moves elements: dtype %s and out_dtype %s differ", k->name,
			   spyre_dtype_name(x->dtype), spyre_dtype_name(x->out_dtype));
	for (int i = 0; i < x->nin; i++) {
		uint32_t cols = (x->bcast_col >> i) & 1 ? 1 : x->cols;
		size_t sz = i == 0 && strcmp(k->name, "where") == 0 ? 1 : isz; /* BOOL mask */
		if (x->in[i] % sz || (x->in_stride[i] && x->in_stride[i] < cols && x->rows > 1))
			return bad(v,
				   "kernel %s input %d at LX %" PRIu32 " stride %" PRIu32
				   ": misaligned or rows overlap",
				   k->name, i, x->in[i], x->in_stride[i]);
	}
	struct insn_access a;
	program__access(v->in, v->hw->stick_bytes, &a);
	uint64_t orow = a.wr.rows > 1 ? x->out_stride * osz : a.wr.len;
	if (x->out % osz || orow < a.wr.len)
		return bad(v,
			   "kernel %s output at LX %" PRIu32 " stride %" PRIu32
			   ": misaligned or rows overlap",
			   k->name, x->out, x->out_stride);
	return 0;
}

static int check_ring(struct vcore *v, const struct spyre_ring *r)
{
	if (r->peer < 0 || r->peer >= v->ncores || r->peer == v->core)
		return bad(v, "peer core %d; it must be another core of the %d in the launch",
			   r->peer, v->ncores);
	if (r->bytes == 0)
		return bad(v, "moves 0 bytes");
	return 0;
}

static int check_fields(struct vcore *v)
{
	switch (v->in->op) {
	case SPYRE_OP_DMA_LOAD:
	case SPYRE_OP_DMA_STORE:
		return check_dma(v, &v->in->u.dma);
	case SPYRE_OP_MATMUL:
		return check_matmul(v, &v->in->u.mm);
	case SPYRE_OP_VEC:
		return check_vec(v, &v->in->u.vec);
	case SPYRE_OP_SEND:
	case SPYRE_OP_RECV:
		return check_ring(v, &v->in->u.ring);
	case SPYRE_OP_BARRIER:
		v->barriers++;
		return 0;
	}
	return bad(v, "unknown opcode %d", (int)v->in->op);
}

static int check_bounds(struct vcore *v, const struct lx_access *x)
{
	uint64_t end = program__access_end(x);
	if (end > v->hw->lx_bytes)
		return bad(v, "LX range [%" PRIu64 ", %" PRIu64 ") is past the %" PRIu64 "-byte LX",
			   x->addr, end, v->hw->lx_bytes);
	return 0;
}

/* Rows that follow each other without a gap are one range: checked (and marked) at once, the
 * same answer as row by row; a miss is then found again row by row to name its row. */
static int contiguous(const struct lx_access *x)
{
	return x->rows > 1 && x->stride == x->len;
}

static int check_written(struct vcore *v, const struct lx_access *x)
{
	uint64_t gap;
	if (contiguous(x) && ivset_covers(&v->written, x->addr, x->addr + x->rows * x->len, &gap))
		return 0;
	for (uint64_t r = 0; r < x->rows; r++) {
		uint64_t lo = x->addr + r * x->stride, miss;
		if (!ivset_covers(&v->written, lo, lo + x->len, &miss))
			return bad(v,
				   "reads LX byte %" PRIu64 " (of [%" PRIu64 ", %" PRIu64
				   ")) before anything wrote it",
				   miss, lo, lo + x->len);
		if (x->stride == 0)
			break;
	}
	return 0;
}

static int mark_written(struct vcore *v, const struct lx_access *x)
{
	if (contiguous(x))
		return ivset_add(&v->written, x->addr, x->addr + x->rows * x->len);
	for (uint64_t r = 0; r < x->rows; r++) {
		uint64_t lo = x->addr + r * x->stride;
		int rc = ivset_add(&v->written, lo, lo + x->len);
		if (rc < 0 || x->stride == 0)
			return rc;
	}
	return 0;
}

static int check_insn(struct vcore *v)
{
	int rc = check_fields(v);
	if (rc < 0)
		return rc;
	struct insn_access a;
	program__access(v->in, v->hw->stick_bytes, &a);
	for (int j = 0; j < a.nrd; j++)
		if ((rc = check_bounds(v, &a.rd[j])) < 0)
			return rc;
	if (a.nwr && (rc = check_bounds(v, &a.wr)) < 0)
		return rc;
	for (int j = 0; j < a.nrd; j++)
		if ((rc = check_written(v, &a.rd[j])) < 0)
			return rc;
	return a.nwr ? mark_written(v, &a.wr) : 0;
}

/* With lx_checked, an earlier core with the same LX pattern passed: its bounds and
 * read-before-write checks would give the same answer here, so only the fields (device
 * addresses, the window, ring peers, barriers) are checked. */
static int check_core(const struct spyre_launch *l, const struct spyre_hw *hw, int c,
		      int lx_checked, size_t *barriers)
{
	struct vcore v = { .hw = hw, .core = c, .ncores = l->ncores };
	int rc = 0;
	for (size_t i = 0; i < l->prog[c].n && rc == 0; i++) {
		v.idx = i;
		v.in = &l->prog[c].insns[i];
		rc = lx_checked ? check_fields(&v) : check_insn(&v);
	}
	free(v.written.iv);
	*barriers = v.barriers;
	return rc;
}

/* ---- across cores ---- */

struct ringop {
	int from, to;
	size_t idx;
	uint32_t bytes;
};

static int ringop_cmp(const void *pa, const void *pb)
{
	const struct ringop *a = pa, *b = pb;
	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	if (a->to != b->to)
		return a->to < b->to ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int collect(const struct spyre_launch *l, enum spyre_opcode op, struct ringop **out,
		   size_t *n)
{
	size_t cnt = 0, k = 0;
	for (int c = 0; c < l->ncores; c++)
		for (size_t i = 0; i < l->prog[c].n; i++)
			cnt += l->prog[c].insns[i].op == op;
	*out = malloc((cnt ? cnt : 1) * sizeof(**out));
	if (!*out)
		return err_set(ERR_NOMEM, "validate: %zu ring operations", cnt);
	for (int c = 0; c < l->ncores; c++)
		for (size_t i = 0; i < l->prog[c].n; i++) {
			const struct spyre_insn *in = &l->prog[c].insns[i];
			if (in->op != op)
				continue;
			int peer = in->u.ring.peer;
			(*out)[k++] = (struct ringop){ .from = op == SPYRE_OP_SEND ? c : peer,
						       .to = op == SPYRE_OP_SEND ? peer : c,
						       .idx = i,
						       .bytes = in->u.ring.bytes };
		}
	qsort(*out, cnt, sizeof(**out), ringop_cmp);
	*n = cnt;
	return 0;
}

static int match_ring(const struct spyre_launch *l)
{
	struct ringop *s = NULL, *r = NULL;
	size_t ns = 0, nr = 0, i = 0, j = 0;
	int rc = collect(l, SPYRE_OP_SEND, &s, &ns);
	if (rc == 0)
		rc = collect(l, SPYRE_OP_RECV, &r, &nr);
	while (rc == 0 && (i < ns || j < nr)) {
		int cmp = i == ns ? 1 : j == nr ? -1 : 0;
		if (cmp == 0 && (s[i].from != r[j].from || s[i].to != r[j].to))
			cmp = ringop_cmp(&s[i], &r[j]);
		if (cmp < 0)
			rc = err_set(ERR_INVAL,
				     "core %d insn %zu (send): %" PRIu32
				     " bytes to core %d that core %d never receives (no matching "
				     "recv)",
				     s[i].from, s[i].idx, s[i].bytes, s[i].to, s[i].to);
		else if (cmp > 0)
			rc = err_set(ERR_INVAL,
				     "core %d insn %zu (recv): %" PRIu32
				     " bytes from core %d that core %d never sends (no matching "
				     "send)",
				     r[j].to, r[j].idx, r[j].bytes, r[j].from, r[j].from);
		else if (s[i].bytes != r[j].bytes)
			rc =
			    err_set(ERR_INVAL,
				    "core %d insn %zu (recv): expects %" PRIu32
				    " bytes from core %d, but its matching send (core %d insn %zu) "
				    "sends %" PRIu32,
				    r[j].to, r[j].idx, r[j].bytes, r[j].from, s[i].from, s[i].idx,
				    s[i].bytes);
		i++;
		j++;
	}
	free(s);
	free(r);
	return rc;
}

int spyre_launch_validate(const struct spyre_launch *l, const struct spyre_hw *hw)
{
	if (l->ncores < 1 || l->ncores > hw->cores || l->ncores > SPYRE_CORES_MAX)
		return err_set(ERR_INVAL, "launch of %d cores; the hardware (%s) has 1..%d",
			       l->ncores, hw->name, hw->cores);
	size_t barriers[SPYRE_CORES_MAX];
	uint64_t pat[SPYRE_CORES_MAX];
	for (int c = 0; c < l->ncores; c++) {
		pat[c] = program__lx_pattern(&l->prog[c], hw->stick_bytes);
		int r = 0;
		while (r < c &&
		       !(pat[r] == pat[c] &&
			 program__same_lx_pattern(&l->prog[c], &l->prog[r], hw->stick_bytes)))
			r++;
		int rc = check_core(l, hw, c, r < c, &barriers[c]);
		if (rc < 0)
			return rc;
	}
	for (int c = 1; c < l->ncores; c++)
		if (barriers[c] != barriers[0])
			return err_set(
			    ERR_INVAL,
			    "core %d insn %zu (end of program): has %zu barriers, core 0 "
			    "has %zu; every core must reach the same number",
			    c, l->prog[c].n, barriers[c], barriers[0]);
	return match_ring(l);
}
