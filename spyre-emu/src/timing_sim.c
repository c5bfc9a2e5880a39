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

/* Runs `body` with `st` on every stick of access `x` (a macro, not a callback: this loop is
 * most of what timing a large launch costs). */
#define FOR_STICKS(x, sb, tab, body)                                                               \
	for (uint64_t r_ = 0; r_ < (x)->rows; r_++) {                                              \
		uint64_t lo_ = (x)->addr + r_ * (x)->stride, hi_ = lo_ + (x)->len;                 \
		struct stick *st = &(tab)[lo_ / (sb)], *end_ = &(tab)[(hi_ + (sb)-1) / (sb)];      \
		for (; st < end_; st++) {                                                          \
			body;                                                                      \
		}                                                                                  \
		if ((x)->stride == 0)                                                              \
			break;                                                                     \
	}

static void core_deps(struct tsim *s, int c, struct stick *tab, size_t nsticks)
{
	const struct spyre_program *p = &s->l->prog[c];
	struct tnode *nodes = tsim_node(s, c, 0);
	uint32_t sb = s->hw->stick_bytes;
	int32_t last_on[RES_COUNT], last_barrier = -1;
	for (int r = 0; r < RES_COUNT; r++)
		last_on[r] = -1;
	uint64_t top = 0; /* only the sticks the program touches need clearing */
	for (size_t i = 0; i < p->n; i++) {
		struct insn_access a;
		program__access(&p->insns[i], sb, &a);
		for (int j = 0; j < a.nrd; j++)
			top = program__access_end(&a.rd[j]) > top ? program__access_end(&a.rd[j])
								  : top;
		if (a.nwr && program__access_end(&a.wr) > top)
			top = program__access_end(&a.wr);
	}
	if ((top + sb - 1) / sb < nsticks)
		nsticks = (size_t)((top + sb - 1) / sb);
	for (size_t k = 0; k < nsticks; k++) {
		tab[k].writer = -1;
		for (int r = 0; r < RES_COUNT; r++)
			tab[k].reader[r] = -1;
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
		int32_t me = (int32_t)i;
		for (int j = 0; j < a.nrd; j++) {
			int32_t prev = -1;
			FOR_STICKS(
			    &a.rd[j], sb, tab, if (st->writer != prev) {
				    prev = st->writer;
				    dep_on(n, nodes, prev);
			    });
		}
		int32_t prevw = -1;
		if (a.nwr)
			FOR_STICKS(&a.wr, sb, tab, {
				if (st->writer != prevw) { /* runs of sticks share a writer */
					prevw = st->writer;
					dep_on(n, nodes, prevw);
				}
				for (int q = 0; q < RES_COUNT; q++)
					if (st->reader[q] > n->dep[q] && st->reader[q] != me)
						n->dep[q] = st->reader[q];
			});
		for (int j = 0; j < a.nrd; j++)
			FOR_STICKS(&a.rd[j], sb, tab, st->reader[n->res] = me);
		if (a.nwr)
			FOR_STICKS(&a.wr, sb, tab, {
				st->writer = me;
				for (int q = 0; q < RES_COUNT; q++)
					st->reader[q] = -1;
			});
		last_on[n->res] = (int32_t)i;
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
	      struct spyre_timing *t)
{
	memset(s, 0, sizeof(*s));
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
	struct stick *tab = malloc((nsticks ? nsticks : 1) * sizeof(*tab));
	if (!tab)
		return err_set(ERR_NOMEM, "timing: LX table of %zu sticks", nsticks);
	for (int c = 0; c < l->ncores; c++)
		core_deps(s, c, tab, nsticks);
	free(tab);
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
