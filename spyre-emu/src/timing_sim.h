/* Private to timing.c and timing_sim.c: the simulation state of the timing model, one node per
 * instruction with its dependences (found once, before simulating) and its schedule. */
#ifndef SPYRE_EMU_TIMING_SIM_H
#define SPYRE_EMU_TIMING_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "spyre-emu/hw.h"
#include "spyre-emu/program.h"
#include "spyre-emu/timing.h"

/* The per-core resources; each runs its instructions in program order. */
enum { RES_DMA, RES_PE, RES_VEC, RES_RING_CW, RES_RING_CCW, RES_SYNC, RES_COUNT };

struct tnode {
	int32_t dep[RES_COUNT]; /* latest earlier insn on each resource it waits for, or -1 */
	int64_t cross;          /* RECV: node of its SEND; else -1 */
	int64_t gid;            /* this node's index in tsim.nodes */
	int64_t pred;           /* the node that decided its start (critical path), or -1 */
	uint64_t start, end;
	uint64_t arrival; /* SEND: when its bytes reach the receiver */
	uint32_t insn;
	int core;
	uint8_t res, done;
};

/* An instruction at the head of its queue whose dependences are all done. */
struct tcand {
	int core;
	uint32_t insn;
	uint64_t ready;
	int64_t pred;
};

struct tsim {
	const struct spyre_launch *l;
	const struct spyre_hw *hw;
	struct spyre_timing *t;
	int no_sharing;      /* the reference mode: every core's dependences found on its own */
	struct tnode *nodes; /* core by core, in program order */
	size_t total, committed;
	size_t base[SPYRE_CORES_MAX];
	uint32_t *queue[SPYRE_CORES_MAX]; /* insn indices grouped by resource */
	size_t qoff[SPYRE_CORES_MAX][RES_COUNT + 1], qpos[SPYRE_CORES_MAX][RES_COUNT];
	uint64_t unit_free[SPYRE_CORES_MAX][RES_COUNT];
	int64_t unit_last[SPYRE_CORES_MAX][RES_COUNT];
	uint64_t chan_free, chan_busy; /* the shared device-memory channel */
	int64_t chan_last;
	uint64_t win_lo[SPYRE_CORES_MAX], win_hi[SPYRE_CORES_MAX]; /* each core's window */
};

int tsim_init(struct tsim *s, const struct spyre_launch *l, const struct spyre_hw *hw,
	      struct spyre_timing *t, int reference);
void tsim_finish(struct tsim *s);

static inline struct tnode *tsim_node(const struct tsim *s, int core, uint32_t insn)
{
	return &s->nodes[s->base[core] + insn];
}

/* 1 with *out filled when the head of (core, res) can start; 0 otherwise. */
int tsim_head_ready(const struct tsim *s, int core, int res, struct tcand *out);
/* Marks a scheduled node done and frees its resource at its end. */
void tsim_retire(struct tsim *s, int core, struct tnode *n);
/* ERR_BADSTATE naming every core that still has work and what it waits at. */
int tsim_deadlock(const struct tsim *s);

uint64_t timing__matmul_cycles(const struct spyre_matmul *mm, const struct spyre_hw *hw);
uint64_t timing__dma_transfer_cycles(uint64_t bytes, const struct spyre_hw *hw);

#endif
