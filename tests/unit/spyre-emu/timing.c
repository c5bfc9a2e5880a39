/* Tests of spyre-emu/timing (the discrete-event model) and its Chrome trace. Every expected
 * number is what the model documented in timing.c says, computed from the shipped hardware
 * description. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/jsonx.h"
#include "program_util.h"
#include "spyre-emu/device.h"
#include "spyre-emu/timing.h"

#define DEV SPYRE_DEV_BASE

static uint64_t run(const struct spyre_launch *l, const struct spyre_hw *hw, struct spyre_timing *t,
		    int keep)
{
	cr_assert_eq(spyre_launch_validate(l, hw), 0, "%s", err_last());
	cr_assert_eq(spyre_launch_time(l, hw, t, keep), 0, "%s", err_last());
	return t->cycles;
}

/* Cycles of a matmul in the model: ceil(tiles / corelets) * k + rows + cols + 16. */
static uint64_t mm_cycles(const struct spyre_hw *hw, uint64_t m, uint64_t k, uint64_t n)
{
	uint64_t tiles =
	    ((m + hw->pe_rows - 1) / hw->pe_rows) * ((n + hw->pe_cols - 1) / hw->pe_cols);
	uint64_t cl = (uint64_t)hw->corelets_per_core, lanes = hw->pe_simd_lanes;
	return (tiles + cl - 1) / cl * ((k + lanes - 1) / lanes) + (uint64_t)hw->pe_rows +
	       (uint64_t)hw->pe_cols + 16;
}

Test(timing, one_dma_costs_setup_plus_bytes_over_bandwidth)
{
	struct spyre_hw hw = tu_hw();
	cr_assert_eq(spyre_hw_dev_bytes_per_cycle(&hw), 128.0);
	struct spyre_launch l;
	struct spyre_timing t;
	spyre_launch_init(&l, 1);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, DEV, 0, 512, 1)); /* 64 KiB */
	cr_expect_eq(run(&l, &hw, &t, 0), hw.dma_setup_cycles + 65536 / 128);
	cr_expect_eq(t.dev_bytes_read, 65536);
	cr_expect_eq(t.dev_bytes_written, 0);
	cr_expect_eq(t.lx_peak[0], 65536);
	cr_expect_eq(t.lx_peak_max, 65536);
	cr_expect_eq(t.util[0][SPYRE_UNIT_DMA], 1.0);
	cr_expect_eq(t.util[0][SPYRE_UNIT_PE], 0.0);
	cr_expect_eq(t.dev_mem_util, 512.0 / (double)t.cycles);
	cr_expect_eq(t.us, (double)t.cycles / 1000.0);
	cr_expect_eq(t.sched, NULL);
	cr_assert_eq(t.ncritical, 1);
	cr_expect_eq(t.critical[0].end, t.cycles);
	spyre_timing_finish(&t);
	spyre_launch_finish(&l);
}

Test(timing, cores_share_device_bandwidth)
{
	struct spyre_hw hw = tu_hw();
	uint64_t s = hw.dma_setup_cycles;
	struct spyre_launch l;
	struct spyre_timing one, two;
	/* one core moving 128 KiB in one DMA */
	spyre_launch_init(&l, 1);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, DEV, 0, 1024, 1));
	cr_expect_eq(run(&l, &hw, &one, 0), s + 1024);
	spyre_launch_finish(&l);
	/* two cores moving 64 KiB each: the channel serves core 0 then core 1 */
	spyre_launch_init(&l, 2);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, DEV, 0, 512, 1));
	tu_push(&l, 1, tu_dma(SPYRE_OP_DMA_LOAD, DEV + 65536, 0, 512, 1));
	cr_expect_eq(run(&l, &hw, &two, 1), s + 1024);
	cr_expect_eq(two.cycles, one.cycles); /* same total bytes, same time: no free bandwidth */
	cr_assert_eq(two.nsched, 2);
	cr_expect_eq(two.sched[0].end, s + 512);
	cr_expect_eq(two.sched[1].start, 0);
	cr_expect_eq(two.sched[1].end, s + 1024);
	cr_expect_eq(two.dev_mem_util, 1024.0 / (double)(s + 1024));
	cr_expect_eq(two.util_avg[SPYRE_UNIT_DMA],
		     ((double)(s + 512) / (double)(s + 1024) + 1.0) / 2.0);
	/* core 1 waited for the channel behind core 0: that is its critical predecessor */
	cr_assert_eq(two.ncritical, 2);
	cr_expect_eq(two.critical[0].core, 0);
	cr_expect_eq(two.critical[1].core, 1);
	spyre_timing_finish(&one);
	spyre_timing_finish(&two);
	spyre_launch_finish(&l);
}

/* Loads B once, then two A tiles; computes C0 = A0 @ B and C1 = A1 @ B. `dbuf` loads A1
 * into a second buffer so its DMA overlaps the first matmul. */
static void tiles(struct spyre_launch *l, int dbuf)
{
	const uint32_t T = 16384; /* a 64 x 64 fp32 tile: 128 sticks */
	spyre_launch_init(l, 1);
	tu_push(l, 0, tu_dma(SPYRE_OP_DMA_LOAD, DEV, 0, 128, 1));     /* B -> [0, T) */
	tu_push(l, 0, tu_dma(SPYRE_OP_DMA_LOAD, DEV + T, T, 128, 1)); /* A0 -> buf 1 */
	tu_push(l, 0, tu_mm(T, 0, 3 * T, 64, 64, 64, SPYRE_DTYPE_FLOAT32, 0));
	uint32_t buf = dbuf ? 2 * T : T;
	tu_push(l, 0, tu_dma(SPYRE_OP_DMA_LOAD, DEV + 2 * T, buf, 128, 1)); /* A1 */
	tu_push(l, 0, tu_mm(buf, 0, 4 * T, 64, 64, 64, SPYRE_DTYPE_FLOAT32, 0));
}

Test(timing, double_buffering_beats_serial)
{
	struct spyre_hw hw = tu_hw();
	uint64_t s = hw.dma_setup_cycles, d = s + 128, mm = mm_cycles(&hw, 64, 64, 64);
	cr_assert_eq(mm, 32 * 64 / hw.pe_simd_lanes + 32);
	struct spyre_launch l;
	struct spyre_timing ser, dbl;
	tiles(&l, 0);
	/* B, A0, mm0; A1 waits for mm0 to stop reading buf 1; mm1 */
	cr_expect_eq(run(&l, &hw, &ser, 1), 2 * d + mm + d + mm);
	/* critical path: every instruction, in order */
	cr_assert_eq(ser.ncritical, 5);
	for (uint32_t i = 0; i < 5; i++)
		cr_expect_eq(ser.critical[i].insn, i);
	cr_expect_eq(ser.sched[3].start, 2 * d + mm);
	spyre_launch_finish(&l);
	tiles(&l, 1);
	uint64_t mm1_start = 2 * d + mm > 3 * d ? 2 * d + mm : 3 * d;
	cr_expect_eq(run(&l, &hw, &dbl, 1), mm1_start + mm);
	cr_expect_eq(dbl.sched[3].start, 2 * d); /* A1 right after A0 */
	cr_expect_lt(dbl.cycles, ser.cycles);
	cr_expect_eq(dbl.lx_peak[0], 5 * 16384);
	cr_expect_eq(dbl.util[0][SPYRE_UNIT_PE], (double)(2 * mm) / (double)dbl.cycles);
	spyre_timing_finish(&ser);
	spyre_timing_finish(&dbl);
	spyre_launch_finish(&l);
}

Test(timing, matmul_edges_waste_their_tile)
{
	struct spyre_hw hw = tu_hw();
	uint64_t s = hw.dma_setup_cycles;
	struct spyre_timing t8, t9, t17;
	uint32_t ms[3] = { 8, 9, 17 };
	struct spyre_timing *ts[3] = { &t8, &t9, &t17 };
	for (int i = 0; i < 3; i++) {
		struct spyre_launch l;
		spyre_launch_init(&l, 1);
		tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, DEV, 0, 64, 1)); /* 8 KiB */
		tu_push(&l, 0, tu_mm(0, 0, 8192, ms[i], 32, 8, SPYRE_DTYPE_DL16, 0));
		cr_expect_eq(run(&l, &hw, ts[i], 0), s + 64 + mm_cycles(&hw, ms[i], 32, 8));
		spyre_launch_finish(&l);
	}
	cr_expect_eq(t8.cycles, t9.cycles); /* 9 rows use two tiles, one per corelet */
	/* 3 tiles: a second pass over k, pe_simd_lanes products a cycle */
	cr_expect_eq(t17.cycles, t9.cycles + 32 / hw.pe_simd_lanes);
	spyre_timing_finish(&t8);
	spyre_timing_finish(&t9);
	spyre_timing_finish(&t17);
}

Test(timing, vec_costs_kernel_cycles)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	struct spyre_timing t;
	spyre_launch_init(&l, 1);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, DEV, 0, 32, 1));
	struct spyre_insn v = tu_vec1("exp", 0, 4096, 32, 32);
	tu_push(&l, 0, v);
	cr_expect_eq(run(&l, &hw, &t, 0),
		     hw.dma_setup_cycles + 32 + spyre_kernel_cycles(&v.u.vec, &hw));
	spyre_timing_finish(&t);
	spyre_launch_finish(&l);
}

/* core 0 sends one stick to `peer` on an 8-core launch. */
static uint64_t ring_case(int peer, struct spyre_timing *t)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	spyre_launch_init(&l, 8);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, DEV, 0, 1, 1));
	tu_push(&l, 0, tu_ring(SPYRE_OP_SEND, peer, 0, 128));
	tu_push(&l, peer, tu_ring(SPYRE_OP_RECV, 0, 0, 128));
	uint64_t c = run(&l, &hw, t, 0);
	spyre_launch_finish(&l);
	return c;
}

Test(timing, farther_ring_peers_take_longer)
{
	struct spyre_hw hw = tu_hw();
	uint64_t base = hw.dma_setup_cycles + 1 + 1, hop = hw.ring_hop_cycles;
	struct spyre_timing t1, t4, t7;
	cr_expect_eq(ring_case(1, &t1), base + hop);
	cr_expect_eq(ring_case(4, &t4), base + 4 * hop);
	cr_expect_eq(ring_case(7, &t7), base + hop); /* one hop the other way */
	cr_expect_gt(t4.cycles, t1.cycles);
	for (int i = 0; i < 8; i++) {
		cr_expect_eq(t1.link_bytes[i][0], i == 0 ? 128 : 0, "link %d cw", i);
		cr_expect_eq(t4.link_bytes[i][0], i < 4 ? 128 : 0, "link %d cw", i);
		cr_expect_eq(t4.link_bytes[i][1], 0);
		cr_expect_eq(t7.link_bytes[i][1], i == 0 ? 128 : 0, "link %d ccw", i);
	}
	/* the RECV waited on core 4's sync queue; its critical predecessor is the SEND */
	cr_assert_eq(t4.ncritical, 3);
	cr_expect_eq(t4.critical[2].core, 4);
	cr_expect_eq(t4.critical[2].unit, SPYRE_UNIT_SYNC);
	cr_expect_eq(t4.critical[1].unit, SPYRE_UNIT_RING);
	spyre_timing_finish(&t1);
	spyre_timing_finish(&t4);
	spyre_timing_finish(&t7);
}

Test(timing, barrier_releases_at_latest_arrival)
{
	struct spyre_hw hw = tu_hw();
	uint64_t s = hw.dma_setup_cycles;
	struct spyre_launch l;
	struct spyre_timing t;
	spyre_launch_init(&l, 2);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, DEV, 0, 512, 1));
	tu_push(&l, 0, tu_barrier());
	tu_push(&l, 1, tu_barrier());
	tu_push(&l, 1, tu_dma(SPYRE_OP_DMA_LOAD, DEV, 0, 1, 1));
	cr_expect_eq(run(&l, &hw, &t, 1), (s + 512) + (s + 1));
	cr_assert_eq(t.nsched, 4);
	cr_expect_eq(t.sched[2].start, 0);       /* core 1 arrives at once */
	cr_expect_eq(t.sched[2].end, s + 512);   /* and leaves with core 0 */
	cr_expect_eq(t.sched[3].start, s + 512); /* its DMA waits for the barrier */
	spyre_timing_finish(&t);
	spyre_launch_finish(&l);
}

Test(timing, deadlock_is_an_error)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	struct spyre_timing t;
	spyre_launch_init(&l, 2);
	for (int c = 0; c < 2; c++) {
		tu_push(&l, c, tu_dma(SPYRE_OP_DMA_LOAD, DEV, 0, 1, 1));
		tu_push(&l, c, tu_ring(SPYRE_OP_RECV, 1 - c, 128, 128));
		/* sends what it received: a real cycle even for dataflow */
		tu_push(&l, c, tu_ring(SPYRE_OP_SEND, 1 - c, 128, 128));
	}
	cr_assert_eq(spyre_launch_validate(&l, &hw), 0, "%s", err_last());
	cr_expect_eq(spyre_launch_time(&l, &hw, &t, 1), ERR_BADSTATE);
	cr_expect(strstr(err_last(), "core 0 insn 1 (recv)") != NULL, "%s", err_last());
	cr_expect_eq(t.sched, NULL);
	spyre_launch_finish(&l);
}

Test(timing, deterministic)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	struct spyre_timing a, b;
	tiles(&l, 1);
	run(&l, &hw, &a, 1);
	run(&l, &hw, &b, 1);
	cr_expect_eq(a.cycles, b.cycles);
	cr_assert_eq(a.nsched, b.nsched);
	cr_expect_eq(memcmp(a.sched, b.sched, a.nsched * sizeof(*a.sched)), 0);
	spyre_timing_finish(&a);
	spyre_timing_finish(&b);
	spyre_launch_finish(&l);
}

Test(timing, trace_is_chrome_json)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	struct spyre_timing t;
	spyre_launch_init(&l, 2);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, DEV, 0, 4, 1));
	tu_push(&l, 0, tu_ring(SPYRE_OP_SEND, 1, 0, 512));
	tu_push(&l, 1, tu_ring(SPYRE_OP_RECV, 0, 0, 512));
	tu_push(&l, 1, tu_vec1("relu", 0, 512, 4, 32));
	tu_push(&l, 1, tu_dma(SPYRE_OP_DMA_STORE, DEV + 4096, 512, 4, 1));
	run(&l, &hw, &t, 1);
	char dir[] = "/tmp/spyre-trace-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	cr_assert_eq(spyre_timing_write_trace(&t, &l, path), 0, "%s", err_last());
	char *text;
	size_t len;
	cr_assert_eq(fs_read_file(&text, &len, path, 1 << 20), 0, "%s", err_last());
	json_t *root = jx_loadb(text, len, len);
	cr_assert_not_null(root, "%s", err_last());
	json_t *ev = jx_get(root, "traceEvents");
	cr_assert(json_is_array(ev));
	cr_expect_eq(json_array_size(ev), 5 + 2 * (1 + SPYRE_UNIT_COUNT));
	size_t nx = 0;
	for (size_t i = 0; i < json_array_size(ev); i++) {
		json_t *e = json_array_get(ev, i);
		const char *ph = jx_get_str(e, "ph");
		cr_assert_not_null(ph);
		if (strcmp(ph, "X") != 0)
			continue;
		int64_t pid, tid;
		cr_assert_eq(jx_get_int(&pid, e, "pid"), 0);
		cr_assert_eq(jx_get_int(&tid, e, "tid"), 0);
		const struct spyre_sched *s = &t.sched[nx++];
		cr_expect_eq(pid, s->core);
		cr_expect_eq(tid, (int64_t)s->unit);
		cr_expect_str_eq(jx_get_str(e, "name"),
				 spyre_opcode_name(l.prog[s->core].insns[s->insn].op));
		double dur = json_real_value(jx_get(e, "dur"));
		cr_expect(fabs(dur - (double)(s->end - s->start) / 1000.0) < 1e-9, "dur %g", dur);
	}
	cr_expect_eq(nx, 5);
	cr_expect_str_eq(jx_get_str(json_array_get(ev, 0), "args.name"), "core 0");
	json_decref(root);
	free(text);
	unlink(path);
	rmdir(dir);
	spyre_timing_finish(&t);
	spyre_launch_finish(&l);
}

Test(timing, dataflow_lets_independent_work_pass_a_waiting_recv)
{
	/* The same exchange with each SEND reading bytes the RECV does not write: the functional
	 * executor (program order) deadlocks, the dataflow model runs the SENDs first. */
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	struct spyre_timing t;
	spyre_launch_init(&l, 2);
	for (int c = 0; c < 2; c++) {
		tu_push(&l, c, tu_dma(SPYRE_OP_DMA_LOAD, DEV, 0, 1, 1));
		tu_push(&l, c, tu_ring(SPYRE_OP_RECV, 1 - c, 128, 128));
		tu_push(&l, c, tu_ring(SPYRE_OP_SEND, 1 - c, 0, 128));
	}
	uint64_t s = hw.dma_setup_cycles;
	/* 2 DMAs share the channel: core 1's ends at s + 2; its send and the hop follow */
	cr_expect_eq(run(&l, &hw, &t, 0), s + 2 + 1 + hw.ring_hop_cycles);
	spyre_timing_finish(&t);
	spyre_launch_finish(&l);
}
