/* The timing simulation's state (timing_sim.h): building one node per instruction with its
 * dependences, the per-resource queues, the SEND each RECV waits for, and the queue-head
 * test the simulation loop in timing.c uses. Dependences are found per core in program order
 * with a table of LX sticks: for each stick, its last writer and, per resource, the latest
 * reader since that write. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "program_access.h"
#include "timing_sim.h"

struct stick {
	int32_t writer;
	int32_t reader[RES_COUNT];
};

static int insn_res(const struct spyre_launch *l, int c, const struct spyre_insn *in)
{
	int dir;
	switch (in->op) {
	case SPYRE_OP_DMA_LOAD:
	case SPYRE_OP_DMA_STORE:
		return RES_DMA;
	case SPYRE_OP_MATMUL:
		return RES_PE;
	case SPYRE_OP_VEC:
		return RES_VEC;
	case SPYRE_OP_SEND:
		program__ring_hops(l->ncores, c, in->u.ring.peer, &dir);
		return dir ? RES_RING_CCW : RES_RING_CW;
	default:
		return RES_SYNC;
	}
}

static void dep_on(struct tnode *node, const struct tnode *core_nodes, int32_t other)
{
	if (other < 0 || (uint32_t)other == node->insn)
		return;
	int r = core_nodes[other].res;
	if (other > node->dep[r])
		node->dep[r] = other;
}

/* The table of LX sticks is kept in blocks of BLK sticks: a block whose sticks all have the same
 * state (the usual case: DMAs and kernels touch long runs) keeps that state once, so an access
 * costs one step per block it covers instead of one per stick. A block is split into its
 * sticks when an access covers part of it; a write that covers it whole makes it uniform
 * again. The dependences found are exactly those of a table of sticks. */
#define BLK 16

struct blk {
	int uniform;
	struct stick s;
};

struct table {
	struct stick *st;
	struct blk *b;
	size_t nblk;
};

struct walk {
	struct tnode *n;
	const struct tnode *nodes;
	int32_t me, prev;
};

static void read_dep(struct walk *w, const struct stick *st)
{
	if (st->writer != w->prev) {
		w->prev = st->writer;
		dep_on(w->n, w->nodes, w->prev);
	}
}

static void write_dep(struct walk *w, const struct stick *st)
{
	read_dep(w, st);
	for (int q = 0; q < RES_COUNT; q++)
		if (st->reader[q] > w->n->dep[q] && st->reader[q] != w->me)
			w->n->dep[q] = st->reader[q];
}

enum { OP_READ_DEP, OP_WRITE_DEP, OP_MARK_READ, OP_MARK_WRITE };

static void apply(struct walk *w, struct stick *st, int op)
{
	switch (op) {
	case OP_READ_DEP:
		read_dep(w, st);
		break;
	case OP_WRITE_DEP:
		write_dep(w, st);
		break;
	case OP_MARK_READ:
		st->reader[w->n->res] = w->me;
		break;
	default:
		st->writer = w->me;
		for (int q = 0; q < RES_COUNT; q++)
			st->reader[q] = -1;
	}
}

/* Sticks [k0, k1) under `op`. */
static void range(struct table *t, struct walk *w, uint64_t k0, uint64_t k1, int op)
{
	for (uint64_t k = k0; k < k1;) {
		uint64_t bi = k / BLK, b0 = bi * BLK, b1 = b0 + BLK, end = b1 < k1 ? b1 : k1;
		struct blk *b = &t->b[bi];
		int whole = k == b0 && end == b1;
		if (b->uniform && (whole || op == OP_READ_DEP || op == OP_WRITE_DEP)) {
			apply(w, &b->s, op);
			k = end;
			continue;
		}
		if (b->uniform) { /* a part of the block changes: its sticks go their own ways */
			for (uint64_t j = b0; j < b1; j++)
				t->st[j] = b->s;
			b->uniform = 0;
		}
		if (whole && op == OP_MARK_WRITE) {
			b->uniform = 1;
			apply(w, &b->s, op);
			k = end;
			continue;
		}
		for (uint64_t j = k; j < end; j++)
			apply(w, &t->st[j], op);
		k = end;
	}
}

static void access_walk(struct table *t, struct walk *w, const struct lx_access *x, uint32_t sb,
			int op)
{
	if (x->rows > 1 && x->stride == x->len) { /* rows without gaps: one range, same sticks */
		uint64_t hi = x->addr + x->rows * x->len;
		range(t, w, x->addr / sb, (hi + sb - 1) / sb, op);
		return;
	}
	for (uint64_t r = 0; r < x->rows; r++) {
		uint64_t lo = x->addr + r * x->stride, hi = lo + x->len;
		range(t, w, lo / sb, (hi + sb - 1) / sb, op);
		if (x->stride == 0)
			break;
	}
}

static void core_deps(struct tsim *s, int c, struct table *t)
{
	const struct spyre_program *p = &s->l->prog[c];
	struct tnode *nodes = tsim_node(s, c, 0);
	uint32_t sb = s->hw->stick_bytes;
	int32_t last_on[RES_COUNT], last_barrier = -1;
	for (int r = 0; r < RES_COUNT; r++)
		last_on[r] = -1;
	for (size_t k = 0; k < t->nblk; k++) {
		t->b[k].uniform = 1;
		t->b[k].s.writer = -1;
		for (int r = 0; r < RES_COUNT; r++)
			t->b[k].s.reader[r] = -1;
	}
	for (size_t i = 0; i < p->n; i++) {
		struct tnode *n = &nodes[i];
		struct insn_access a;
		program__access(&p->insns[i], sb, &a);
		dep_on(n, nodes, last_barrier);
		if (p->insns[i].op == SPYRE_OP_BARRIER) {
			for (int r = 0; r < RES_COUNT; r++)
				dep_on(n, nodes, last_on[r]);
			last_barrier = (int32_t)i;
		}
		struct walk w = { .n = n, .nodes = nodes, .me = (int32_t)i, .prev = -1 };
		for (int j = 0; j < a.nrd; j++, w.prev = -1)
			access_walk(t, &w, &a.rd[j], sb, OP_READ_DEP);
		if (a.nwr)
			access_walk(t, &w, &a.wr, sb, OP_WRITE_DEP);
		for (int j = 0; j < a.nrd; j++)
			access_walk(t, &w, &a.rd[j], sb, OP_MARK_READ);
		if (a.nwr)
			access_walk(t, &w, &a.wr, sb, OP_MARK_WRITE);
		last_on[n->res] = (int32_t)i;
	}
}

/* Cores whose programs touch LX the same way (program__same_lx_pattern) with their
 * instructions on the same units get the same dependences: the pass above sees nothing else. So
 * it runs once per distinct pattern and the other cores copy its result. */
static int same_units(const struct tsim *s, int c, int r)
{
	for (size_t i = 0; i < s->l->prog[c].n; i++)
		if (tsim_node(s, c, (uint32_t)i)->res != tsim_node(s, r, (uint32_t)i)->res)
			return 0;
	return 1;
}

static void all_deps(struct tsim *s, struct table *t)
{
	uint64_t h[SPYRE_CORES_MAX];
	uint32_t sb = s->hw->stick_bytes;
	for (int c = 0; c < s->l->ncores; c++) {
		h[c] = program__lx_pattern(&s->l->prog[c], sb);
		int r = 0;
		while (r < c && !(h[r] == h[c] &&
				  program__same_lx_pattern(&s->l->prog[c], &s->l->prog[r], sb) &&
				  same_units(s, c, r)))
			r++;
		if (r == c) {
			core_deps(s, c, t);
			continue;
		}
		for (size_t i = 0; i < s->l->prog[c].n; i++)
			memcpy(tsim_node(s, c, (uint32_t)i)->dep, tsim_node(s, r, (uint32_t)i)->dep,
			       sizeof(tsim_node(s, c, 0)->dep));
	}
}

/* Each RECV's node points at the node of the SEND it matches (in order per pair). */
static int match_sends(struct tsim *s)
{
	const struct spyre_launch *l = s->l;
	size_t off[SPYRE_CORES_MAX][SPYRE_CORES_MAX] = { { 0 } };
	size_t nsend = 0, acc = 0, fill[SPYRE_CORES_MAX][SPYRE_CORES_MAX] = { { 0 } };
	for (int c = 0; c < l->ncores; c++)
		for (size_t i = 0; i < l->prog[c].n; i++) {
			const struct spyre_insn *in = &l->prog[c].insns[i];
			if (in->op != SPYRE_OP_SEND && in->op != SPYRE_OP_RECV)
				continue;
			if (in->u.ring.peer < 0 || in->u.ring.peer >= l->ncores)
				return err_set(ERR_INVAL, "core %d insn %zu (%s): bad peer %d", c,
					       i, spyre_opcode_name(in->op), in->u.ring.peer);
			if (in->op == SPYRE_OP_SEND) {
				off[c][in->u.ring.peer]++;
				nsend++;
			}
		}
	for (int a = 0; a < SPYRE_CORES_MAX; a++) /* counts -> offsets */
		for (int b = 0; b < SPYRE_CORES_MAX; b++) {
			size_t cnt = off[a][b];
			off[a][b] = acc;
			acc += cnt;
		}
	int64_t *gid = malloc((nsend ? nsend : 1) * sizeof(*gid));
	if (!gid)
		return err_set(ERR_NOMEM, "timing: %zu sends", nsend);
	for (int c = 0; c < l->ncores; c++)
		for (size_t i = 0; i < l->prog[c].n; i++)
			if (l->prog[c].insns[i].op == SPYRE_OP_SEND) {
				int p = l->prog[c].insns[i].u.ring.peer;
				gid[off[c][p] + fill[c][p]++] = (int64_t)(s->base[c] + i);
			}
	int rc = 0;
	size_t got[SPYRE_CORES_MAX][SPYRE_CORES_MAX] = { { 0 } };
	for (int c = 0; c < l->ncores && rc == 0; c++)
		for (size_t i = 0; i < l->prog[c].n; i++) {
			if (l->prog[c].insns[i].op != SPYRE_OP_RECV)
				continue;
			int p = l->prog[c].insns[i].u.ring.peer;
			if (got[p][c] >= fill[p][c]) {
				rc = err_set(
				    ERR_INVAL,
				    "core %d insn %zu (recv): no matching send from core %d "
				    "(validate the launch first)",
				    c, i, p);
				break;
			}
			tsim_node(s, c, (uint32_t)i)->cross = gid[off[p][c] + got[p][c]++];
		}
	free(gid);
	return rc;
}

static int build_nodes(struct tsim *s)
{
	const struct spyre_launch *l = s->l;
	for (int c = 0; c < l->ncores; c++) {
		s->base[c] = s->total;
		s->total += l->prog[c].n;
	}
	s->nodes = calloc(s->total ? s->total : 1, sizeof(*s->nodes));
	if (!s->nodes)
		return err_set(ERR_NOMEM, "timing: %zu instructions", s->total);
	for (int c = 0; c < l->ncores; c++) {
		size_t n = l->prog[c].n;
		s->queue[c] = malloc((n ? n : 1) * sizeof(*s->queue[c]));
		if (!s->queue[c])
			return err_set(ERR_NOMEM, "timing: queues of core %d", c);
		size_t cnt[RES_COUNT] = { 0 };
		for (size_t i = 0; i < n; i++) {
			struct tnode *node = tsim_node(s, c, (uint32_t)i);
			node->core = c;
			node->insn = (uint32_t)i;
			node->gid = (int64_t)(s->base[c] + i);
			node->pred = node->cross = -1;
			node->res = (uint8_t)insn_res(l, c, &l->prog[c].insns[i]);
			for (int r = 0; r < RES_COUNT; r++)
				node->dep[r] = -1;
			cnt[node->res]++;
		}
		s->qoff[c][0] = 0;
		for (int r = 0; r < RES_COUNT; r++) {
			s->qoff[c][r + 1] = s->qoff[c][r] + cnt[r];
			s->qpos[c][r] = s->qoff[c][r];
			s->unit_last[c][r] = -1;
		}
		size_t fill[RES_COUNT];
		memcpy(fill, s->qoff[c], sizeof(fill));
		for (size_t i = 0; i < n; i++)
			s->queue[c][fill[tsim_node(s, c, (uint32_t)i)->res]++] = (uint32_t)i;
	}
	return 0;
}

int tsim_init(struct tsim *s, const struct spyre_launch *l, const struct spyre_hw *hw,
	      struct spyre_timing *t, int reference)
{
	memset(s, 0, sizeof(*s));
	s->no_sharing = reference;
	s->l = l;
	s->hw = hw;
	s->t = t;
	s->chan_last = -1;
	if (l->ncores < 1 || l->ncores > SPYRE_CORES_MAX)
		return err_set(ERR_INVAL, "timing: launch of %d cores", l->ncores);
	int rc = build_nodes(s);
	if (rc == 0)
		rc = match_sends(s);
	if (rc < 0)
		return rc;
	uint64_t peak[SPYRE_CORES_MAX], most = 0;
	program__lx_peak(l, hw->stick_bytes, peak);
	for (int c = 0; c < l->ncores; c++)
		if (peak[c] > most)
			most = peak[c];
	if (most > hw->lx_bytes)
		return err_set(ERR_INVAL,
			       "timing: a program touches %" PRIu64
			       " bytes of LX, more than %" PRIu64 " (validate it first)",
			       most, hw->lx_bytes);
	size_t nsticks = (size_t)((most + hw->stick_bytes - 1) / hw->stick_bytes);
	struct table tab = { .nblk = (nsticks + BLK - 1) / BLK };
	tab.st = malloc((tab.nblk ? tab.nblk : 1) * BLK * sizeof(*tab.st));
	tab.b = malloc((tab.nblk ? tab.nblk : 1) * sizeof(*tab.b));
	if (!tab.st || !tab.b) {
		free(tab.st);
		free(tab.b);
		return err_set(ERR_NOMEM, "timing: LX table of %zu sticks", nsticks);
	}
	if (s->no_sharing)
		for (int c = 0; c < l->ncores; c++)
			core_deps(s, c, &tab);
	else
		all_deps(s, &tab);
	free(tab.st);
	free(tab.b);
	return 0;
}

void tsim_finish(struct tsim *s)
{
	free(s->nodes);
	for (int c = 0; c < SPYRE_CORES_MAX; c++)
		free(s->queue[c]);
	memset(s, 0, sizeof(*s));
}

int tsim_head_ready(const struct tsim *s, int core, int res, struct tcand *out)
{
	size_t q = s->qpos[core][res];
	if (q >= s->qoff[core][res + 1])
		return 0;
	uint32_t i = s->queue[core][q];
	const struct tnode *n = tsim_node(s, core, i);
	if (n->cross >= 0 && !s->nodes[n->cross].done)
		return 0;
	out->core = core;
	out->insn = i;
	out->ready = s->unit_free[core][res];
	out->pred = s->unit_last[core][res];
	for (int r = 0; r < RES_COUNT; r++) {
		if (n->dep[r] < 0)
			continue;
		const struct tnode *d = tsim_node(s, core, (uint32_t)n->dep[r]);
		if (!d->done)
			return 0;
		if (d->end > out->ready) {
			out->ready = d->end;
			out->pred = d->gid;
		}
	}
	return 1;
}

void tsim_retire(struct tsim *s, int core, struct tnode *n)
{
	n->done = 1;
	s->unit_free[core][n->res] = n->end;
	s->unit_last[core][n->res] = n->gid;
	s->qpos[core][n->res]++;
	s->committed++;
}

int tsim_deadlock(const struct tsim *s)
{
	struct buf b;
	buf_init(&b, 4096);
	for (int c = 0; c < s->l->ncores; c++) {
		size_t first = SIZE_MAX;
		for (int r = 0; r < RES_COUNT; r++)
			if (s->qpos[c][r] < s->qoff[c][r + 1] && s->queue[c][s->qpos[c][r]] < first)
				first = s->queue[c][s->qpos[c][r]];
		if (first != SIZE_MAX)
			buf_appendf(&b, "%score %d insn %zu (%s)", b.len ? ", " : "", c, first,
				    spyre_opcode_name(s->l->prog[c].insns[first].op));
	}
	int rc = err_set(ERR_BADSTATE, "timing: deadlock; blocked: %s", buf_str(&b));
	buf_finish(&b);
	return rc;
}
