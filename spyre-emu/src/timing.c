/* The timing model (timing.h): a deterministic discrete-event simulation of a validated
 * launch.
 *
 * Resources, per core: the DMA engine, the PE array, the vector unit, two ring ports (one per
 * direction) and a "sync" queue where RECVs and BARRIERs wait. Each resource runs its own
 * instructions in program order. Device memory is one server of
 * spyre_hw_dev_bytes_per_cycle() bytes per cycle shared by every core's DMAs.
 *
 * Dataflow: before simulating, a pass over each core's program finds, at stick granularity
 * (LX is tracked per 128-byte stick: two instructions touching different bytes of one stick
 * are ordered, which is conservative), the instructions each one must wait for: the last
 * writer of what it reads, and the last writer and the readers since of what it writes. Since a
 * resource finishes its instructions in program order, only the latest such instruction per
 * resource matters, so an instruction has at most one dependence per resource. A BARRIER waits
 * for everything before it on its core, and everything after it waits for the barrier.
 *
 * Costs (cycles):
 *  - DMA: dma_setup_cycles on the core's engine (twice when the transfer lies outside the
 *    core's current addressing window, which then moves to it), then ceil(bytes / device bytes per
 * cycle) on the shared channel, which serves transfers first come first served in order of the time
 *    they are ready (ties: lower core, then lower index);
 *  - MATMUL: output-stationary tiles of pe_rows x pe_cols outputs, each streaming k products;
 *    the corelets share the tiles; each PE is a SIMD unit doing pe_simd_lanes products of K a
 *    cycle: ceil(ceil(m/pe_rows) * ceil(n/pe_cols) / corelets) * ceil(k / pe_simd_lanes)
 *    + pe_rows + pe_cols (array fill and drain) + MATMUL_FIXED_CYCLES. Edges that are not a
 *    multiple of the array waste the rest of their tile. DL16 and fp32 inputs cost the same;
 *  - VEC: spyre_kernel_cycles();
 *  - SEND: ceil(bytes / ring_bytes_per_cycle) on the sender's port in the shorter direction
 *    (clockwise on a tie); the bytes arrive hops x ring_hop_cycles after the port is done and
 *    are counted on every link they cross (links are not contended: only ports are);
 *  - RECV: waits on the sync queue until max(ready, arrival);
 *  - BARRIER: each core arrives when everything before it is done; all leave at the latest
 *    arrival.
 *
 * The simulation commits, at each step, the ready instruction with the earliest ready time
 * (ties by core, then index) among the heads of every core's resource queues, which keeps the
 * device-memory queue in ready order. */
#include "spyre-emu/timing.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "program_access.h"
#include "spyre-emu/kernels.h"
#include "timing_sim.h"

#define MATMUL_FIXED_CYCLES 16

const char *spyre_unit_name(enum spyre_unit u)
{
	static const char *const names[] = {
		[SPYRE_UNIT_DMA] = "dma",   [SPYRE_UNIT_PE] = "pe",     [SPYRE_UNIT_VEC] = "vec",
		[SPYRE_UNIT_RING] = "ring", [SPYRE_UNIT_SYNC] = "sync",
	};
	return (unsigned)u < SPYRE_UNIT_COUNT ? names[u] : "?";
}

static enum spyre_unit res_unit(int r)
{
	static const enum spyre_unit units[RES_COUNT] = {
		[RES_DMA] = SPYRE_UNIT_DMA,       [RES_PE] = SPYRE_UNIT_PE,
		[RES_VEC] = SPYRE_UNIT_VEC,       [RES_RING_CW] = SPYRE_UNIT_RING,
		[RES_RING_CCW] = SPYRE_UNIT_RING, [RES_SYNC] = SPYRE_UNIT_SYNC,
	};
	return units[r];
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

uint64_t timing__matmul_cycles(const struct spyre_matmul *mm, const struct spyre_hw *hw)
{
	uint64_t r = hw->pe_rows > 0 ? (uint64_t)hw->pe_rows : 8;
	uint64_t c = hw->pe_cols > 0 ? (uint64_t)hw->pe_cols : 8;
	uint64_t corelets = hw->corelets_per_core > 0 ? (uint64_t)hw->corelets_per_core : 1;
	uint64_t lanes = hw->pe_simd_lanes > 0 ? hw->pe_simd_lanes : 1;
	uint64_t tiles = ceil_div(mm->m, r) * ceil_div(mm->n, c);
	return ceil_div(tiles, corelets) * ceil_div(mm->k, lanes) + r + c + MATMUL_FIXED_CYCLES;
}

uint64_t timing__dma_transfer_cycles(uint64_t bytes, const struct spyre_hw *hw)
{
	double bpc = spyre_hw_dev_bytes_per_cycle(hw);
	double t = ceil((double)bytes / bpc - 1e-9);
	return t < 1 ? 1 : (uint64_t)t;
}

/* ---- committing one instruction ---- */

/* 1 when the DMA's device range lies outside the core's current addressing window, which
 * then moves to it (the same rule validate.c applies). */
static int window_moves(struct tsim *s, int c, const struct spyre_dma *d)
{
	uint64_t row = (uint64_t)d->sticks * s->hw->stick_bytes;
	uint64_t lo = d->dev_addr, hi = lo + (uint64_t)(d->rows - 1) * d->dev_stride + row;
	uint64_t nlo = s->win_hi[c] && s->win_lo[c] < lo ? s->win_lo[c] : lo;
	uint64_t nhi = s->win_hi[c] > hi ? s->win_hi[c] : hi;
	int moved = s->win_hi[c] && nhi - nlo > s->hw->window_bytes;
	if (moved)
		nlo = lo, nhi = hi;
	s->win_lo[c] = nlo;
	s->win_hi[c] = nhi;
	return moved;
}

static void commit_dma(struct tsim *s, struct tnode *n, int c, const struct spyre_insn *in)
{
	const struct spyre_dma *d = &in->u.dma;
	uint64_t bytes = (uint64_t)d->rows * d->sticks * s->hw->stick_bytes;
	uint64_t setup = s->hw->dma_setup_cycles * (window_moves(s, c, d) ? 2u : 1u);
	uint64_t at = n->start + setup;
	uint64_t xfer = timing__dma_transfer_cycles(bytes, s->hw);
	if (s->chan_free > at) {
		at = s->chan_free;
		n->pred = s->chan_last;
	}
	n->end = at + xfer;
	s->chan_free = n->end;
	s->chan_last = n->gid;
	s->chan_busy += xfer;
	if (in->op == SPYRE_OP_DMA_LOAD)
		s->t->dev_bytes_read += bytes;
	else
		s->t->dev_bytes_written += bytes;
}

static void commit_send(struct tsim *s, struct tnode *n, int c, const struct spyre_ring *r)
{
	int dir, hops = program__ring_hops(s->l->ncores, c, r->peer, &dir);
	uint64_t bpc = s->hw->ring_bytes_per_cycle ? s->hw->ring_bytes_per_cycle : 1;
	n->end = n->start + ceil_div(r->bytes, bpc);
	n->arrival = n->end + (uint64_t)hops * s->hw->ring_hop_cycles;
	for (int h = 0, k = c; h < hops; h++) {
		s->t->link_bytes[k][dir] += r->bytes;
		k = (k + (dir ? s->l->ncores - 1 : 1)) % s->l->ncores;
	}
}

static void commit_one(struct tsim *s, int c, uint32_t i, uint64_t ready, int64_t pred)
{
	struct tnode *n = tsim_node(s, c, i);
	const struct spyre_insn *in = &s->l->prog[c].insns[i];
	n->start = ready;
	n->pred = pred;
	switch (in->op) {
	case SPYRE_OP_DMA_LOAD:
	case SPYRE_OP_DMA_STORE:
		commit_dma(s, n, c, in);
		break;
	case SPYRE_OP_MATMUL:
		n->end = ready + timing__matmul_cycles(&in->u.mm, s->hw);
		break;
	case SPYRE_OP_VEC:
		n->end = ready + spyre_kernel_cycles(&in->u.vec, s->hw);
		break;
	case SPYRE_OP_SEND:
		commit_send(s, n, c, &in->u.ring);
		break;
	case SPYRE_OP_RECV: {
		const struct tnode *snd = &s->nodes[n->cross];
		n->end = ready;
		if (snd->arrival > ready) {
			n->end = snd->arrival;
			n->pred = n->cross;
		}
		break;
	}
	case SPYRE_OP_BARRIER:
		break; /* commit_barrier sets the end */
	}
	tsim_retire(s, c, n);
}

/* Every core's barrier of one ordinal leaves at the latest arrival. */
static void commit_barrier(struct tsim *s, const struct tcand *cand)
{
	uint64_t release = 0;
	int last = 0;
	for (int c = 0; c < s->l->ncores; c++)
		if (cand[c].ready > release || c == 0) {
			release = cand[c].ready;
			last = c;
		}
	int64_t last_gid = tsim_node(s, last, cand[last].insn)->gid;
	for (int c = 0; c < s->l->ncores; c++) {
		struct tnode *n = tsim_node(s, c, cand[c].insn);
		n->start = cand[c].ready;
		n->end = release;
		n->pred = c == last ? cand[c].pred : last_gid;
		tsim_retire(s, c, n);
	}
}

/* The straightforward scan (the reference mode): every queue head of every core looked at
 * each step; the minimum of (ready, core, insn) commits. */
static int step_scan(struct tsim *s)
{
	struct tcand best = { .core = -1 }, bar[SPYRE_CORES_MAX];
	int nbar = 0;
	uint64_t bar_ready = 0;
	for (int c = 0; c < s->l->ncores; c++)
		for (int r = 0; r < RES_COUNT; r++) {
			struct tcand k;
			if (!tsim_head_ready(s, c, r, &k))
				continue;
			if (s->l->prog[c].insns[k.insn].op == SPYRE_OP_BARRIER) {
				bar[c] = k;
				nbar++;
				if (k.ready > bar_ready)
					bar_ready = k.ready;
				continue;
			}
			if (best.core < 0 || k.ready < best.ready ||
			    (k.ready == best.ready && k.core == best.core && k.insn < best.insn))
				best = k;
		}
	if (nbar == s->l->ncores && (best.core < 0 || bar_ready < best.ready)) {
		commit_barrier(s, bar);
		return 0;
	}
	if (best.core < 0)
		return tsim_deadlock(s);
	commit_one(s, best.core, best.insn, best.ready, best.pred);
	return 0;
}

/* The ready queue heads, kept in a binary heap by (ready, core, insn): the order the
 * simulation commits in. A head's ready time never changes once it is ready (its resource
 * only frees when it commits, and its dependences are done), so a head is pushed once; only
 * the core that committed (and a RECV's peer when a SEND commits) can have new ready heads.
 * BARRIER heads wait aside until every core has one. */
struct sched {
	struct tcand heap[SPYRE_CORES_MAX * RES_COUNT];
	size_t n;
	uint8_t queued[SPYRE_CORES_MAX][RES_COUNT];
	struct tcand bar[SPYRE_CORES_MAX];
	int nbar;
};

static int cand_before(const struct tcand *a, const struct tcand *b)
{
	if (a->ready != b->ready)
		return a->ready < b->ready;
	if (a->core != b->core)
		return a->core < b->core;
	return a->insn < b->insn;
}

static void heap_push(struct sched *q, const struct tcand *k)
{
	size_t i = q->n++;
	while (i > 0 && cand_before(k, &q->heap[(i - 1) / 2])) {
		q->heap[i] = q->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	q->heap[i] = *k;
}

static struct tcand heap_pop(struct sched *q)
{
	struct tcand top = q->heap[0], last = q->heap[--q->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= q->n)
			break;
		if (c + 1 < q->n && cand_before(&q->heap[c + 1], &q->heap[c]))
			c++;
		if (!cand_before(&q->heap[c], &last))
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	if (q->n)
		q->heap[i] = last;
	return top;
}

/* Queues the heads of `c` that became ready. */
static void refresh(struct tsim *s, struct sched *q, int c)
{
	for (int r = 0; r < RES_COUNT; r++) {
		struct tcand k;
		if (q->queued[c][r] || !tsim_head_ready(s, c, r, &k))
			continue;
		q->queued[c][r] = 1;
		if (s->l->prog[c].insns[k.insn].op == SPYRE_OP_BARRIER) {
			q->bar[c] = k;
			q->nbar++;
		} else {
			heap_push(q, &k);
		}
	}
}

/* One step: commits the earliest ready instruction (or barrier group). 0, or ERR_BADSTATE on
 * a deadlock. */
static int step(struct tsim *s, struct sched *q)
{
	int ncores = s->l->ncores;
	if (q->nbar == ncores) {
		uint64_t bar_ready = 0;
		for (int c = 0; c < ncores; c++)
			if (q->bar[c].ready > bar_ready)
				bar_ready = q->bar[c].ready;
		if (q->n == 0 || bar_ready < q->heap[0].ready) {
			commit_barrier(s, q->bar);
			q->nbar = 0;
			for (int c = 0; c < ncores; c++) {
				q->queued[c][RES_SYNC] = 0;
				refresh(s, q, c);
			}
			return 0;
		}
	}
	if (q->n == 0)
		return tsim_deadlock(s);
	struct tcand k = heap_pop(q);
	const struct spyre_insn *in = &s->l->prog[k.core].insns[k.insn];
	commit_one(s, k.core, k.insn, k.ready, k.pred);
	q->queued[k.core][tsim_node(s, k.core, k.insn)->res] = 0;
	refresh(s, q, k.core);
	if (in->op == SPYRE_OP_SEND)
		refresh(s, q, in->u.ring.peer);
	return 0;
}

static void utilization(struct tsim *s)
{
	struct spyre_timing *t = s->t;
	double span = t->cycles ? (double)t->cycles : 1.0;
	for (int c = 0; c < s->l->ncores; c++) {
		uint64_t busy[RES_COUNT] = { 0 };
		for (size_t i = 0; i < s->l->prog[c].n; i++) {
			const struct tnode *n = tsim_node(s, c, (uint32_t)i);
			busy[n->res] += n->end - n->start;
		}
		uint64_t ring =
		    busy[RES_RING_CW] > busy[RES_RING_CCW] ? busy[RES_RING_CW] : busy[RES_RING_CCW];
		for (int r = 0; r < RES_COUNT; r++)
			if (r != RES_RING_CW && r != RES_RING_CCW)
				t->util[c][res_unit(r)] = (double)busy[r] / span;
		t->util[c][SPYRE_UNIT_RING] = (double)ring / span;
		for (int u = 0; u < SPYRE_UNIT_COUNT; u++)
			t->util_avg[u] += t->util[c][u] / s->l->ncores;
	}
	t->dev_mem_util = (double)s->chan_busy / span;
}

static struct spyre_sched sched_of(const struct tsim *s, const struct tnode *n)
{
	return (struct spyre_sched){ .core = n->core,
				     .insn = n->insn,
				     .unit = res_unit(n->res),
				     .start = n->start,
				     .end = n->end };
}

/* Walks back from the last instruction to end through the predecessor that decided each
 * start. */
static int critical_path(struct tsim *s)
{
	int64_t last = -1;
	for (size_t g = 0; g < s->total; g++)
		if (last < 0 || s->nodes[g].end > s->nodes[last].end)
			last = (int64_t)g;
	size_t len = 0;
	for (int64_t g = last; g >= 0 && len < s->total; g = s->nodes[g].pred)
		len++;
	if (len == 0)
		return 0;
	s->t->critical = calloc(len, sizeof(*s->t->critical));
	if (!s->t->critical)
		return err_set(ERR_NOMEM, "timing: critical path of %zu", len);
	s->t->ncritical = len;
	int64_t g = last;
	for (size_t k = len; k > 0; k--, g = s->nodes[g].pred)
		s->t->critical[k - 1] = sched_of(s, &s->nodes[g]);
	return 0;
}

static int keep(struct tsim *s)
{
	s->t->sched = calloc(s->total ? s->total : 1, sizeof(*s->t->sched));
	if (!s->t->sched)
		return err_set(ERR_NOMEM, "timing: schedule of %zu", s->total);
	for (size_t g = 0; g < s->total; g++)
		s->t->sched[g] = sched_of(s, &s->nodes[g]);
	s->t->nsched = s->total;
	return 0;
}

static int finish_results(struct tsim *s, int keep_schedule)
{
	struct spyre_timing *t = s->t;
	for (size_t g = 0; g < s->total; g++)
		if (s->nodes[g].end > t->cycles)
			t->cycles = s->nodes[g].end;
	t->us = s->hw->clock_ghz > 0 ? (double)t->cycles / (s->hw->clock_ghz * 1e3) : 0;
	utilization(s);
	program__lx_peak(s->l, s->hw->stick_bytes, t->lx_peak);
	for (int c = 0; c < s->l->ncores; c++)
		if (t->lx_peak[c] > t->lx_peak_max)
			t->lx_peak_max = t->lx_peak[c];
	int rc = critical_path(s);
	if (rc == 0 && keep_schedule)
		rc = keep(s);
	return rc;
}

static _Thread_local int reference_mode;

void spyre_timing_reference_mode(int on)
{
	reference_mode = on != 0;
}

int spyre_launch_time_validated(const struct spyre_launch *l, const struct spyre_hw *hw,
				struct spyre_timing *t, int keep_schedule)
{
	memset(t, 0, sizeof(*t));
	t->ncores = l->ncores;
	if (spyre_hw_dev_bytes_per_cycle(hw) <= 0 || hw->stick_bytes == 0)
		return err_set(ERR_INVAL, "timing: hardware %s has no device bandwidth or stick",
			       hw->name);
	struct tsim s;
	int reference = reference_mode || (keep_schedule & SPYRE_TIMING_REFERENCE);
	int rc = tsim_init(&s, l, hw, t, reference);
	struct sched *q = rc == 0 && !reference ? calloc(1, sizeof(*q)) : NULL;
	if (rc == 0 && !reference && !q)
		rc = err_set(ERR_NOMEM, "timing: scheduler");
	for (int c = 0; q && rc == 0 && c < l->ncores; c++)
		refresh(&s, q, c);
	while (rc == 0 && s.committed < s.total)
		rc = q ? step(&s, q) : step_scan(&s);
	free(q);
	if (rc == 0)
		rc = finish_results(&s, keep_schedule & SPYRE_TIMING_KEEP_SCHEDULE);
	tsim_finish(&s);
	if (rc < 0)
		spyre_timing_finish(t);
	return rc;
}

int spyre_launch_time(const struct spyre_launch *l, const struct spyre_hw *hw,
		      struct spyre_timing *t, int keep_schedule)
{
	memset(t, 0, sizeof(*t));
	int rc = spyre_launch_validate(l, hw); /* the model trusts every extent */
	return rc < 0 ? rc : spyre_launch_time_validated(l, hw, t, keep_schedule);
}

uint64_t spyre_launch_lower_bound(const struct spyre_launch *l, const struct spyre_hw *hw)
{
	uint64_t chan = 0, best = 0;
	for (int c = 0; c < l->ncores; c++) {
		uint64_t dma = 0, pe = 0, vec = 0;
		const struct spyre_program *p = &l->prog[c];
		for (size_t i = 0; i < p->n; i++) {
			const struct spyre_insn *in = &p->insns[i];
			if (in->op == SPYRE_OP_DMA_LOAD || in->op == SPYRE_OP_DMA_STORE) {
				uint64_t bytes =
				    (uint64_t)in->u.dma.rows * in->u.dma.sticks * hw->stick_bytes;
				uint64_t x = timing__dma_transfer_cycles(bytes, hw);
				chan += x;
				dma += x + hw->dma_setup_cycles;
			} else if (in->op == SPYRE_OP_MATMUL) {
				pe += timing__matmul_cycles(&in->u.mm, hw);
			} else if (in->op == SPYRE_OP_VEC) {
				vec += spyre_kernel_cycles(&in->u.vec, hw);
			}
		}
		uint64_t m = dma > pe ? dma : pe;
		m = m > vec ? m : vec;
		best = m > best ? m : best;
	}
	return chan > best ? chan : best;
}

void spyre_timing_finish(struct spyre_timing *t)
{
	free(t->critical);
	free(t->sched);
	t->critical = NULL;
	t->sched = NULL;
	t->ncritical = t->nsched = 0;
}
