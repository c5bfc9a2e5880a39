/* Functional execution of a launch (spyre_launch_execute), which it validates first. Each core has
 * its own LX buffer, allocated only as large as the program's high-water mark. Cores run
 * round-robin, each until it blocks: on a RECV whose SEND has not happened yet, or on a BARRIER not
 * yet reached by every core. A SEND copies its bytes into a FIFO channel per (sender, receiver)
 * pair, so a core never reads another core's LX directly. Because a core blocks only on what other
 * cores must provide, and the data it receives is the same whatever the order, results do not
 * depend on the order cores run in. A round in which no core moves is a deadlock, reported with the
 * blocked cores. */
#include <cblas.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "program_access.h"
#include "spyre-emu/device.h"
#include "spyre-emu/dl16.h"
#include "spyre-emu/kernels.h"
#include "spyre-emu/program.h"

struct msg {
	struct msg *next;
	uint32_t bytes;
	uint8_t data[];
};

struct chan {
	struct msg *head, *tail;
};

/* LX buffers and fp32 tile scratch are kept per thread across launches: a launch never reads an
 * LX byte it did not write (validation proves it), so the memory need not be fresh, and reusing
 * it spares a kernel case the page faults of a new allocation. */
struct lx_pool {
	uint8_t *lx;
	size_t cap;
	float *ta, *tb; /* converted A and B tiles */
	size_t ta_cap, tb_cap;
};
static _Thread_local struct lx_pool lx_pool[SPYRE_CORES_MAX];

/* The A tile last converted on a core, reused while nothing overwrites it. */
struct a_cache {
	int valid;
	uint32_t off, rows, cols, stride;
};

struct xcore {
	uint8_t *lx;
	struct a_cache acache;
	size_t pc;
	size_t barriers_reached; /* counting the one it waits at */
	int waiting_barrier;
};

struct xrun {
	const struct spyre_launch *l;
	struct spyre_device *dev;
	const struct spyre_hw *hw;
	struct xcore core[SPYRE_CORES_MAX];
	struct chan chan[SPYRE_CORES_MAX][SPYRE_CORES_MAX]; /* [from][to] */
};

static int exec_dma(struct xrun *x, int c, const struct spyre_insn *in)
{
	const struct spyre_dma *d = &in->u.dma;
	uint64_t row = (uint64_t)d->sticks * x->hw->stick_bytes;
	for (uint32_t r = 0; r < d->rows; r++) {
		uint64_t dev = d->dev_addr + (uint64_t)r * d->dev_stride;
		uint8_t *lx = x->core[c].lx + d->lx_addr + (uint64_t)r * d->lx_stride;
		uint8_t *p = spyre_device_ptr(x->dev, dev, row);
		if (!p)
			return err_prefix("core %d insn %zu (%s) row %" PRIu32, c, x->core[c].pc,
					  spyre_opcode_name(in->op), r);
		if (in->op == SPYRE_OP_DMA_LOAD)
			memcpy(lx, p, row);
		else
			memcpy(p, lx, row);
	}
	return 0;
}

/* Grows a per-thread scratch buffer to n floats. */
static float *scratch(float **p, size_t *cap, size_t n)
{
	if (n > *cap) {
		float *q = realloc(*p, n * sizeof(float));
		if (!q)
			return NULL;
		*p = q;
		*cap = n;
	}
	return *p;
}

/* A DL16 tile (rows x cols, `stride` elements apart) as dense fp32 in `t`; exact. */
static float *tile_f32(float *t, const uint8_t *lx, uint32_t off, uint32_t rows, uint32_t cols,
		       uint32_t stride)
{
	if (!t)
		return NULL;
	const uint16_t *src = (const uint16_t *)(const void *)(lx + off);
	for (uint32_t r = 0; r < rows; r++)
		spyre_dl16_to_f32_n(t + (size_t)r * cols, src + (size_t)r * stride, cols);
	return t;
}

static int exec_matmul(struct xrun *x, int c, const struct spyre_matmul *mm)
{
	uint8_t *lx = x->core[c].lx;
	const float *a = (const float *)(const void *)(lx + mm->a);
	const float *b = (const float *)(const void *)(lx + mm->b);
	float *cc = (float *)(void *)(lx + mm->c);
	int lda = (int)mm->a_stride, ldb = (int)mm->b_stride;
	if (mm->in_dtype == SPYRE_DTYPE_DL16) {
		struct lx_pool *pl = &lx_pool[c];
		struct a_cache *ac = &x->core[c].acache;
		if (!(ac->valid && ac->off == mm->a && ac->rows == mm->m && ac->cols == mm->k &&
		      ac->stride == mm->a_stride)) {
			ac->valid = 0;
			if (!tile_f32(scratch(&pl->ta, &pl->ta_cap, (size_t)mm->m * mm->k), lx,
				      mm->a, mm->m, mm->k, mm->a_stride))
				return err_set(ERR_NOMEM, "core %d insn %zu (matmul): fp32 A tile",
					       c, x->core[c].pc);
			*ac = (struct a_cache){ 1, mm->a, mm->m, mm->k, mm->a_stride };
		}
		uint32_t br = mm->b_trans ? mm->n : mm->k, bc = mm->b_trans ? mm->k : mm->n;
		if (!tile_f32(scratch(&pl->tb, &pl->tb_cap, (size_t)br * bc), lx, mm->b, br, bc,
			      mm->b_stride))
			return err_set(ERR_NOMEM, "core %d insn %zu (matmul): fp32 B tile", c,
				       x->core[c].pc);
		a = pl->ta;
		b = pl->tb;
		lda = (int)mm->k;
		ldb = (int)bc;
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, mm->b_trans ? CblasTrans : CblasNoTrans,
		    (int)mm->m, (int)mm->n, (int)mm->k, 1.0f, a, lda, b, ldb,
		    mm->accumulate ? 1.0f : 0.0f, cc, (int)mm->c_stride);
	return 0;
}

/* Forgets core c's converted A tile when instruction `in` writes over any of it. */
static void acache_check(struct xrun *x, int c, const struct spyre_insn *in)
{
	struct a_cache *ac = &x->core[c].acache;
	if (!ac->valid)
		return;
	struct insn_access a;
	program__access(in, x->hw->stick_bytes, &a);
	if (!a.nwr)
		return;
	uint64_t lo = ac->off, hi = lo + ((uint64_t)(ac->rows - 1) * ac->stride + ac->cols) * 2;
	uint64_t wlo = a.wr.addr, whi = program__access_end(&a.wr);
	if (wlo < hi && lo < whi)
		ac->valid = 0;
}

static int exec_send(struct xrun *x, int c, const struct spyre_ring *r)
{
	struct msg *m = malloc(sizeof(*m) + r->bytes);
	if (!m)
		return err_set(ERR_NOMEM, "core %d insn %zu (send): %" PRIu32 " bytes", c,
			       x->core[c].pc, r->bytes);
	m->next = NULL;
	m->bytes = r->bytes;
	memcpy(m->data, x->core[c].lx + r->lx_addr, r->bytes);
	struct chan *ch = &x->chan[c][r->peer];
	if (ch->tail)
		ch->tail->next = m;
	else
		ch->head = m;
	ch->tail = m;
	return 0;
}

/* 1 when received, 0 when the message is not there yet. */
static int exec_recv(struct xrun *x, int c, const struct spyre_ring *r)
{
	struct chan *ch = &x->chan[r->peer][c];
	struct msg *m = ch->head;
	if (!m)
		return 0;
	ch->head = m->next;
	if (!ch->head)
		ch->tail = NULL;
	memcpy(x->core[c].lx + r->lx_addr, m->data, m->bytes < r->bytes ? m->bytes : r->bytes);
	free(m);
	return 1;
}

/* 1 when every core has reached this core's current barrier. */
static int barrier_open(const struct xrun *x, int c)
{
	for (int o = 0; o < x->l->ncores; o++)
		if (x->core[o].barriers_reached < x->core[c].barriers_reached)
			return 0;
	return 1;
}

/* Runs one instruction: 1 done, 0 blocked, or an error. */
static int step(struct xrun *x, int c)
{
	const struct spyre_insn *in = &x->l->prog[c].insns[x->core[c].pc];
	switch (in->op) {
	case SPYRE_OP_DMA_LOAD:
	case SPYRE_OP_DMA_STORE: {
		int rc = exec_dma(x, c, in);
		return rc < 0 ? rc : 1;
	}
	case SPYRE_OP_MATMUL: {
		int rc = exec_matmul(x, c, &in->u.mm);
		return rc < 0 ? rc : 1;
	}
	case SPYRE_OP_VEC:
		if (in->u.vec.kernel >= spyre_kernels_count)
			return err_set(ERR_INVAL, "core %d insn %zu (vec): no kernel %u", c,
				       x->core[c].pc, in->u.vec.kernel);
		spyre_kernels[in->u.vec.kernel].fn(&in->u.vec, x->core[c].lx);
		return 1;
	case SPYRE_OP_SEND: {
		int rc = exec_send(x, c, &in->u.ring);
		return rc < 0 ? rc : 1;
	}
	case SPYRE_OP_RECV:
		return exec_recv(x, c, &in->u.ring);
	case SPYRE_OP_BARRIER:
		if (!x->core[c].waiting_barrier) {
			x->core[c].waiting_barrier = 1;
			x->core[c].barriers_reached++;
		}
		if (!barrier_open(x, c))
			return 0;
		x->core[c].waiting_barrier = 0;
		return 1;
	}
	return err_set(ERR_INVAL, "core %d insn %zu: unknown opcode %d", c, x->core[c].pc,
		       (int)in->op);
}

/* Runs core c until it blocks or ends; *moved is set when it did anything. */
static int run_core(struct xrun *x, int c, int *moved)
{
	const struct spyre_program *p = &x->l->prog[c];
	while (x->core[c].pc < p->n) {
		int was_waiting = x->core[c].waiting_barrier;
		int rc = step(x, c);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			if (!was_waiting && x->core[c].waiting_barrier)
				*moved = 1; /* arriving at a barrier is progress */
			return 0;
		}
		acache_check(x, c, &p->insns[x->core[c].pc]);
		x->core[c].pc++;
		*moved = 1;
	}
	return 0;
}

static int deadlock(const struct xrun *x)
{
	struct buf b;
	buf_init(&b, 4096);
	for (int c = 0; c < x->l->ncores; c++) {
		const struct xcore *k = &x->core[c];
		if (k->pc >= x->l->prog[c].n)
			continue;
		const struct spyre_insn *in = &x->l->prog[c].insns[k->pc];
		if (in->op == SPYRE_OP_RECV)
			buf_appendf(&b, "%score %d insn %zu (recv from core %d)", b.len ? ", " : "",
				    c, k->pc, in->u.ring.peer);
		else
			buf_appendf(&b, "%score %d insn %zu (barrier %zu)", b.len ? ", " : "", c,
				    k->pc, k->barriers_reached);
	}
	int rc = err_set(ERR_BADSTATE, "deadlock: no core can move; blocked: %s", buf_str(&b));
	buf_finish(&b);
	return rc;
}

static int alloc_lx(struct xrun *x)
{
	uint64_t peak[SPYRE_CORES_MAX];
	program__lx_peak(x->l, x->hw->stick_bytes, peak);
	for (int c = 0; c < x->l->ncores; c++) {
		if (peak[c] == 0)
			continue;
		if (peak[c] > x->hw->lx_bytes)
			return err_set(ERR_INVAL,
				       "core %d: program touches %" PRIu64
				       " bytes of LX, more than %" PRIu64 " (validate it first)",
				       c, peak[c], x->hw->lx_bytes);
		struct lx_pool *pl = &lx_pool[c];
		if (pl->cap < peak[c]) {
			uint8_t *p = realloc(pl->lx, peak[c]);
			if (!p)
				return err_set(ERR_NOMEM, "core %d: %" PRIu64 " bytes of LX", c,
					       peak[c]);
			pl->lx = p;
			pl->cap = peak[c];
		}
		x->core[c].lx = pl->lx;
	}
	return 0;
}

static void xrun_finish(struct xrun *x)
{
	for (int c = 0; c < SPYRE_CORES_MAX; c++) {
		for (int o = 0; o < SPYRE_CORES_MAX; o++)
			for (struct msg *m = x->chan[c][o].head, *n; m; m = n) {
				n = m->next;
				free(m);
			}
	}
}

int spyre_launch_execute(const struct spyre_launch *l, struct spyre_device *dev)
{
	struct xrun *x = calloc(1, sizeof(*x));
	if (!x)
		return err_set(ERR_NOMEM, "execute: run state");
	x->l = l;
	x->dev = dev;
	x->hw = spyre_device_hw(dev);
	int rc = spyre_launch_validate(l, x->hw); /* a bad program never runs */
	if (rc == 0)
		rc = alloc_lx(x);
	for (;;) {
		if (rc < 0)
			break;
		int moved = 0, left = 0;
		for (int c = 0; c < l->ncores && rc == 0; c++) {
			rc = run_core(x, c, &moved);
			left |= x->core[c].pc < l->prog[c].n;
		}
		if (rc < 0 || !left)
			break;
		if (!moved) {
			rc = deadlock(x);
			break;
		}
	}
	xrun_finish(x);
	free(x);
	return rc;
}

void spyre_launch_release_buffers(void)
{
	for (int c = 0; c < SPYRE_CORES_MAX; c++) {
		free(lx_pool[c].lx);
		free(lx_pool[c].ta);
		free(lx_pool[c].tb);
		lx_pool[c] = (struct lx_pool){ 0 };
	}
}
