/* The timing model: a deterministic discrete-event simulation of a launch. Resources: per core
 * a DMA engine, the PE array, the vector unit and two ring ports (one per direction); device
 * memory bandwidth is one resource shared by all cores. An instruction starts when its unit is
 * free and its operands are there (dataflow: the last writer of every LX byte it reads has
 * finished, and no earlier instruction still reads or writes what it overwrites); a RECV
 * finishes when its SEND's bytes have crossed the ring (hops x hop latency + bytes / link
 * bandwidth). Good for choosing between plans, not for predicting wall-clock (docs/emu.md). */
#ifndef SPYRE_EMU_TIMING_H
#define SPYRE_EMU_TIMING_H

#include <stddef.h>
#include <stdint.h>

#include "spyre-emu/hw.h"
#include "spyre-emu/program.h"

enum spyre_unit {
	SPYRE_UNIT_DMA,
	SPYRE_UNIT_PE,
	SPYRE_UNIT_VEC,
	SPYRE_UNIT_RING, /* the sending core's port */
	SPYRE_UNIT_SYNC, /* barriers and receives waiting */
	SPYRE_UNIT_COUNT
};

/* One scheduled instruction. */
struct spyre_sched {
	int core;
	uint32_t insn;
	enum spyre_unit unit;
	uint64_t start, end; /* cycles */
};

struct spyre_timing {
	uint64_t cycles; /* makespan */
	double us;       /* cycles / clock */
	int ncores;
	/* fraction of the makespan each unit was busy, per core and averaged over cores */
	double util[SPYRE_CORES_MAX][SPYRE_UNIT_COUNT];
	double util_avg[SPYRE_UNIT_COUNT];
	double dev_mem_util; /* the shared device-memory channel */
	uint64_t dev_bytes_read, dev_bytes_written;
	/* bytes over each ring link: [i][0] from core i to i+1 (clockwise), [i][1] from i to i-1 */
	uint64_t link_bytes[SPYRE_CORES_MAX][2];
	uint64_t lx_peak[SPYRE_CORES_MAX];
	uint64_t lx_peak_max;
	/* the chain of instructions that decided the makespan, first to last */
	struct spyre_sched *critical;
	size_t ncritical;
	/* every scheduled instruction, when asked for (for the Chrome trace) */
	struct spyre_sched *sched;
	size_t nsched;
};

/* Flags for the last argument of the two functions below (0 and 1 keep their old meaning). */
enum {
	SPYRE_TIMING_KEEP_SCHEDULE = 1, /* t->sched holds every instruction */
	/* the reference simulation: every core's dependences found on its own (not shared
	 * between cores whose programs touch LX alike) and every queue head scanned at each
	 * step (not a heap of the ready ones). Slower, the same results: tests compare them. */
	SPYRE_TIMING_REFERENCE = 2,
};

/* Every simulation of the calling thread in the reference mode (on) or not (off, the
 * default), for tests that compare whole plan searches both ways. */
void spyre_timing_reference_mode(int on);

/* Simulates a validated launch. With keep_schedule, t->sched holds every instruction. */
int spyre_launch_time(const struct spyre_launch *l, const struct spyre_hw *hw,
		      struct spyre_timing *t, int keep_schedule);
/* The same for a launch spyre_launch_validate() has already accepted (planning validates each
 * candidate once). */
int spyre_launch_time_validated(const struct spyre_launch *l, const struct spyre_hw *hw,
				struct spyre_timing *t, int keep_schedule);
/* A lower bound on the makespan spyre_launch_time() would report, from one pass over the
 * programs: the busiest core's DMA engine, PE array or vector unit, or the shared device-memory
 * channel, each as if nothing ever waited. The planner skips simulating a candidate whose bound
 * is already worse than the best simulated so far. */
uint64_t spyre_launch_lower_bound(const struct spyre_launch *l, const struct spyre_hw *hw);
void spyre_timing_finish(struct spyre_timing *t);

/* Writes the kept schedule as Chrome trace-event JSON (one process per core, one thread per
 * unit), atomically, for Perfetto or chrome://tracing. */
int spyre_timing_write_trace(const struct spyre_timing *t, const struct spyre_launch *l,
			     const char *path);

const char *spyre_unit_name(enum spyre_unit u);

#endif
