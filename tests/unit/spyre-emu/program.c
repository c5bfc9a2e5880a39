/* Tests of spyre-emu/program (launches, validation, functional execution). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "program_util.h"
#include "spyre-emu/device.h"
#include "spyre-emu/dl16.h"
#include "spyre-emu/timing.h"

#define LX_MAX ((uint32_t)(2 * 1024 * 1024))

Test(program, push_grows_and_names)
{
	struct spyre_launch l;
	spyre_launch_init(&l, 2);
	for (int i = 0; i < 1000; i++)
		tu_push(&l, 1, tu_barrier());
	cr_expect_eq(l.prog[1].n, 1000);
	cr_expect_eq(l.prog[0].n, 0);
	struct spyre_insn b = tu_barrier();
	cr_expect_eq(spyre_program_push(&l, 2, &b), ERR_INVAL);
	cr_expect_str_eq(spyre_opcode_name(SPYRE_OP_DMA_LOAD), "dma_load");
	cr_expect_str_eq(spyre_opcode_name(SPYRE_OP_BARRIER), "barrier");
	spyre_launch_finish(&l);
	cr_expect_eq(l.prog[1].insns, NULL);
}

Test(program, push_stops_at_the_limit)
{
	struct spyre_launch l;
	spyre_launch_init(&l, 1);
	struct spyre_insn b = tu_barrier();
	for (size_t i = 0; i < SPYRE_PROGRAM_INSNS_MAX; i++)
		if (spyre_program_push(&l, 0, &b) != 0)
			cr_assert_fail("push %zu: %s", i, err_last());
	cr_expect_eq(spyre_program_push(&l, 0, &b), ERR_LIMIT);
	cr_expect(strstr(err_last(), "SPYRE_PROGRAM_INSNS_MAX") != NULL, "%s", err_last());
	cr_expect_eq(l.prog[0].n, SPYRE_PROGRAM_INSNS_MAX);
	spyre_launch_finish(&l);
}

Test(program, lx_peak)
{
	struct spyre_launch l;
	spyre_launch_init(&l, 2);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, SPYRE_DEV_BASE, 4096, 2, 3)); /* 4096 + 768 */
	tu_push(&l, 1, tu_ring(SPYRE_OP_RECV, 0, 100, 28));
	uint64_t peak[SPYRE_CORES_MAX];
	spyre_launch_lx_peak(&l, peak);
	cr_expect_eq(peak[0], 4096 + 768);
	cr_expect_eq(peak[1], 128);
	cr_expect_eq(peak[2], 0);
	spyre_launch_finish(&l);
}

/* ---- validation: each error is refused with core, insn and opcode ---- */

Test(program_validate, accepts_a_good_program)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	spyre_launch_init(&l, 2);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, SPYRE_DEV_BASE, 0, 4, 2));
	tu_push(&l, 0, tu_ring(SPYRE_OP_SEND, 1, 0, 1024));
	tu_push(&l, 0, tu_barrier());
	tu_push(&l, 1, tu_ring(SPYRE_OP_RECV, 0, 512, 1024));
	tu_push(&l, 1, tu_barrier());
	tu_push(&l, 1, tu_dma(SPYRE_OP_DMA_STORE, SPYRE_DEV_BASE + 4096, 512, 8, 1));
	cr_expect_eq(spyre_launch_validate(&l, &hw), 0, "%s", err_last());
	spyre_launch_finish(&l);
}

Test(program_validate, core_count)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	spyre_launch_init(&l, 0);
	cr_expect_eq(spyre_launch_validate(&l, &hw), ERR_INVAL);
	cr_assert_eq(spyre_hw_set_cores(&hw, 4), 0);
	l.ncores = 5;
	cr_expect_eq(spyre_launch_validate(&l, &hw), ERR_INVAL);
	cr_expect(strstr(err_last(), "5 cores") != NULL, "%s", err_last());
}

Test(program_validate, lx_overflow)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	spyre_launch_init(&l, 1);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, SPYRE_DEV_BASE, 0, 1, 1));
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, SPYRE_DEV_BASE, LX_MAX - 128, 2, 1));
	tu_refused(&l, &hw, "core 0 insn 1 (dma_load): LX range [2097024, 2097280) is past");
	spyre_launch_finish(&l);
}

Test(program_validate, misaligned_dma)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	spyre_launch_init(&l, 1);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, SPYRE_DEV_BASE + 64, 0, 1, 1));
	tu_refused(&l, &hw, "core 0 insn 0 (dma_load): device address");
	spyre_launch_finish(&l);
	spyre_launch_init(&l, 1);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, SPYRE_DEV_BASE, 0, 1, 1));
	struct spyre_insn st = tu_dma(SPYRE_OP_DMA_STORE, SPYRE_DEV_BASE, 0, 1, 2);
	st.u.dma.dev_stride = 200;
	tu_push(&l, 0, st);
	tu_refused(&l, &hw, "core 0 insn 1 (dma_store)");
	spyre_launch_finish(&l);
}

Test(program_validate, window_moves_but_one_transfer_must_fit)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	spyre_launch_init(&l, 3);
	tu_push(&l, 2, tu_dma(SPYRE_OP_DMA_LOAD, SPYRE_DEV_BASE, 0, 1, 1));
	tu_push(&l, 2, tu_dma(SPYRE_OP_DMA_STORE, SPYRE_DEV_BASE + hw.window_bytes - 128, 0, 1, 1));
	cr_assert_eq(spyre_launch_validate(&l, &hw), 0, "%s", err_last()); /* exactly the window */
	/* past it: the window moves, which the timing model charges as one more setup */
	struct spyre_timing t0, t1;
	memset(&t0, 0, sizeof(t0));
	memset(&t1, 0, sizeof(t1));
	cr_assert_eq(spyre_launch_time(&l, &hw, &t0, 0), 0, "%s", err_last());
	tu_push(&l, 2, tu_dma(SPYRE_OP_DMA_STORE, SPYRE_DEV_BASE + hw.window_bytes, 0, 1, 1));
	cr_assert_eq(spyre_launch_validate(&l, &hw), 0, "%s", err_last());
	cr_assert_eq(spyre_launch_time(&l, &hw, &t1, 0), 0, "%s", err_last());
	cr_expect_geq(t1.cycles, t0.cycles + 2 * hw.dma_setup_cycles);
	spyre_timing_finish(&t0);
	spyre_timing_finish(&t1);
	/* one transfer wider than the window is refused */
	struct spyre_insn wide = tu_dma(SPYRE_OP_DMA_LOAD, SPYRE_DEV_BASE, 0, 1, 2);
	wide.u.dma.dev_stride = hw.window_bytes;
	tu_push(&l, 2, wide);
	tu_refused(&l, &hw, "core 2 insn 3 (dma_load): device bytes");
	spyre_launch_finish(&l);
}

Test(program_validate, bad_peer)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	spyre_launch_init(&l, 2);
	tu_push(&l, 1, tu_ring(SPYRE_OP_RECV, 1, 0, 128));
	tu_refused(&l, &hw, "core 1 insn 0 (recv): peer core 1");
	spyre_launch_finish(&l);
	spyre_launch_init(&l, 2);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, SPYRE_DEV_BASE, 0, 1, 1));
	tu_push(&l, 0, tu_ring(SPYRE_OP_SEND, 2, 0, 128));
	tu_refused(&l, &hw, "core 0 insn 1 (send): peer core 2");
	spyre_launch_finish(&l);
}

Test(program_validate, unmatched_send_and_size)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	spyre_launch_init(&l, 3);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, SPYRE_DEV_BASE, 0, 2, 1));
	tu_push(&l, 0, tu_ring(SPYRE_OP_SEND, 2, 0, 256));
	tu_push(&l, 0, tu_ring(SPYRE_OP_SEND, 2, 0, 256));
	tu_push(&l, 2, tu_ring(SPYRE_OP_RECV, 0, 0, 256));
	tu_refused(&l, &hw, "core 0 insn 2 (send): 256 bytes to core 2");
	tu_push(&l, 2, tu_ring(SPYRE_OP_RECV, 0, 0, 128));
	tu_refused(&l, &hw, "core 2 insn 1 (recv): expects 128 bytes from core 0");
	tu_push(&l, 1, tu_ring(SPYRE_OP_RECV, 2, 0, 8));
	l.prog[2].insns[1].u.ring.bytes = 256;
	tu_refused(&l, &hw, "core 1 insn 0 (recv): 8 bytes from core 2");
	spyre_launch_finish(&l);
}

Test(program_validate, barrier_count_mismatch)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	spyre_launch_init(&l, 2);
	tu_push(&l, 0, tu_barrier());
	tu_push(&l, 0, tu_barrier());
	tu_push(&l, 1, tu_barrier());
	tu_refused(&l, &hw, "core 1 insn 1 (end of program): has 1 barriers, core 0 has 2");
	spyre_launch_finish(&l);
}

Test(program_validate, read_before_write)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	spyre_launch_init(&l, 1);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, SPYRE_DEV_BASE, 0, 4, 1));    /* [0, 512) */
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, SPYRE_DEV_BASE, 1024, 1, 1)); /* [1024, 1152) */
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_STORE, SPYRE_DEV_BASE, 384, 1, 1)); /* fine */
	cr_assert_eq(spyre_launch_validate(&l, &hw), 0, "%s", err_last());
	tu_push(&l, 0, tu_ring(SPYRE_OP_SEND, 0, 0, 1)); /* placeholder, replaced below */
	l.prog[0].insns[3] = tu_dma(SPYRE_OP_DMA_STORE, SPYRE_DEV_BASE, 384, 6, 1);
	tu_refused(&l, &hw, "core 0 insn 3 (dma_store): reads LX byte 512 (of [384, 1152))");
	/* a matmul reading an unwritten B */
	l.prog[0].insns[3] = tu_mm(0, 2048, 4096, 4, 4, 4, SPYRE_DTYPE_FLOAT32, 0);
	tu_refused(&l, &hw, "core 0 insn 3 (matmul): reads LX byte 2048");
	/* accumulating into a C nothing wrote */
	l.prog[0].insns[3] = tu_mm(0, 64, 4096, 4, 4, 4, SPYRE_DTYPE_FLOAT32, 1);
	tu_refused(&l, &hw, "core 0 insn 3 (matmul): reads LX byte 4096");
	spyre_launch_finish(&l);
}

Test(program_validate, bad_kernel_and_matmul_types)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	spyre_launch_init(&l, 1);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, SPYRE_DEV_BASE, 0, 4, 1));
	struct spyre_insn v = tu_vec1("relu", 0, 512, 4, 32);
	tu_push(&l, 0, v);
	cr_assert_eq(spyre_launch_validate(&l, &hw), 0, "%s", err_last());
	l.prog[0].insns[1].u.vec.kernel = (uint16_t)spyre_kernels_count;
	tu_refused(&l, &hw, "core 0 insn 1 (vec): kernel index");
	l.prog[0].insns[1] = v;
	l.prog[0].insns[1].u.vec.nin = 2;
	tu_refused(&l, &hw, "core 0 insn 1 (vec): kernel relu takes 1 inputs, not 2");
	l.prog[0].insns[1] = tu_mm(0, 64, 1024, 4, 4, 4, SPYRE_DTYPE_FLOAT16, 0);
	tu_refused(&l, &hw, "core 0 insn 1 (matmul): input dtype float16");
	l.prog[0].insns[1] = tu_mm(0, 64, 1024, 4, 4, 4, SPYRE_DTYPE_FLOAT32, 0);
	l.prog[0].insns[1].u.mm.out_dtype = SPYRE_DTYPE_DL16;
	tu_refused(&l, &hw, "core 0 insn 1 (matmul): output dtype");
	l.prog[0].insns[1] = tu_mm(0, 64, 32, 4, 4, 4, SPYRE_DTYPE_FLOAT32, 0);
	tu_refused(&l, &hw, "core 0 insn 1 (matmul): output C overlaps input A");
	l.prog[0].insns[1] = tu_mm(0, 64, 1024, 0, 4, 4, SPYRE_DTYPE_FLOAT32, 0);
	tu_refused(&l, &hw, "core 0 insn 1 (matmul): empty");
	spyre_launch_finish(&l);
}

Test(program_validate, row_reduce_output_extent)
{
	/* row_sum over 4 x 32 writes one float per row, 32 floats apart: a later reader of 4
	 * dense floats at the output reads bytes it never wrote. */
	struct spyre_hw hw = tu_hw();
	struct spyre_launch l;
	spyre_launch_init(&l, 1);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, SPYRE_DEV_BASE, 0, 4, 1));
	tu_push(&l, 0, tu_vec1("row_sum", 0, 1024, 4, 32));
	struct spyre_insn c = tu_vec1("copy", 1024, 4096, 4, 1);
	c.u.vec.in_stride[0] = 32;
	tu_push(&l, 0, c);
	cr_assert_eq(spyre_launch_validate(&l, &hw), 0, "%s", err_last());
	l.prog[0].insns[2].u.vec.in_stride[0] = 1;
	tu_refused(&l, &hw, "core 0 insn 2 (vec): reads LX byte 1028");
	spyre_launch_finish(&l);
}

/* ---- functional execution ---- */

struct devbuf {
	struct spyre_device *dev;
	uint64_t addr;
	uint8_t *p;
};

static struct devbuf dev_buf(struct spyre_device *dev, uint64_t bytes)
{
	struct devbuf b = { .dev = dev };
	cr_assert_eq(spyre_device_alloc(dev, &b.addr, bytes), 0, "%s", err_last());
	b.p = spyre_device_ptr(dev, b.addr, bytes);
	cr_assert_not_null(b.p, "%s", err_last());
	return b;
}

Test(program_exec, dma_in_and_out_copies_bytes)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_device *dev;
	cr_assert_eq(spyre_device_create(&dev, &hw), 0, "%s", err_last());
	struct devbuf src = dev_buf(dev, 8192), dst = dev_buf(dev, 8192);
	for (int i = 0; i < 8192; i++)
		src.p[i] = (uint8_t)(i * 7 + 3);
	struct spyre_launch l;
	spyre_launch_init(&l, 1);
	/* rows of 2 sticks, every other 2-stick group of the source, packed in LX */
	struct spyre_insn ld = tu_dma(SPYRE_OP_DMA_LOAD, src.addr, 256, 2, 16);
	ld.u.dma.dev_stride = 512;
	tu_push(&l, 0, ld);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_STORE, dst.addr, 256, 32, 1));
	cr_assert_eq(spyre_launch_validate(&l, &hw), 0, "%s", err_last());
	cr_assert_eq(spyre_launch_execute(&l, dev), 0, "%s", err_last());
	for (int r = 0; r < 16; r++)
		cr_assert_eq(memcmp(dst.p + r * 256, src.p + r * 512, 256), 0, "row %d", r);
	for (int i = 4096; i < 8192; i++)
		cr_assert_eq(dst.p[i], 0);
	spyre_launch_finish(&l);
	spyre_device_destroy(dev);
}

Test(program_exec, refuses_an_invalid_launch_without_running_it)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_device *dev;
	cr_assert_eq(spyre_device_create(&dev, &hw), 0, "%s", err_last());
	struct devbuf src = dev_buf(dev, 256), dst = dev_buf(dev, 256);
	memset(src.p, 0xAB, 256);
	struct spyre_launch l;
	spyre_launch_init(&l, 1);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, src.addr, 0, 1, 1));
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_STORE, dst.addr, 0, 1, 1));
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_STORE, dst.addr + 128, 128, 1, 1)); /* unwritten */
	cr_expect_eq(spyre_launch_execute(&l, dev), ERR_INVAL);
	cr_expect(strstr(err_last(), "core 0 insn 2 (dma_store)") != NULL, "%s", err_last());
	cr_expect_eq(dst.p[0], 0, "the first store must not have run");
	spyre_launch_finish(&l);
	spyre_device_destroy(dev);
}

Test(program_exec, send_recv_moves_data_between_cores)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_device *dev;
	cr_assert_eq(spyre_device_create(&dev, &hw), 0, "%s", err_last());
	struct devbuf src = dev_buf(dev, 1024), dst = dev_buf(dev, 1024);
	for (int i = 0; i < 1024; i++)
		src.p[i] = (uint8_t)(255 - i * 3);
	struct spyre_launch l;
	spyre_launch_init(&l, 4);
	/* core 0 -> core 3 -> core 1 -> device; core 3 runs its RECV before core 0's SEND has
	 * happened in the first round, so it must block and resume. */
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, src.addr, 0, 8, 1));
	tu_push(&l, 0, tu_ring(SPYRE_OP_SEND, 3, 0, 1024));
	tu_push(&l, 0, tu_barrier());
	tu_push(&l, 1, tu_ring(SPYRE_OP_RECV, 3, 1024, 1024));
	tu_push(&l, 1, tu_barrier());
	tu_push(&l, 1, tu_dma(SPYRE_OP_DMA_STORE, dst.addr, 1024, 8, 1));
	tu_push(&l, 2, tu_barrier());
	tu_push(&l, 3, tu_ring(SPYRE_OP_RECV, 0, 256, 1024));
	tu_push(&l, 3, tu_ring(SPYRE_OP_SEND, 1, 256, 1024));
	tu_push(&l, 3, tu_barrier());
	cr_assert_eq(spyre_launch_validate(&l, &hw), 0, "%s", err_last());
	cr_assert_eq(spyre_launch_execute(&l, dev), 0, "%s", err_last());
	cr_expect_eq(memcmp(dst.p, src.p, 1024), 0);
	spyre_launch_finish(&l);
	spyre_device_destroy(dev);
}

Test(program_exec, deadlock_is_detected)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_device *dev;
	cr_assert_eq(spyre_device_create(&dev, &hw), 0, "%s", err_last());
	struct devbuf src = dev_buf(dev, 256);
	struct spyre_launch l;
	spyre_launch_init(&l, 2);
	for (int c = 0; c < 2; c++) {
		tu_push(&l, c, tu_dma(SPYRE_OP_DMA_LOAD, src.addr, 0, 1, 1));
		tu_push(&l, c, tu_ring(SPYRE_OP_RECV, 1 - c, 128, 128));
		tu_push(&l, c, tu_ring(SPYRE_OP_SEND, 1 - c, 0, 128));
	}
	cr_assert_eq(spyre_launch_validate(&l, &hw), 0, "%s", err_last()); /* matched, cyclic */
	cr_assert_eq(spyre_launch_execute(&l, dev), ERR_BADSTATE);
	cr_expect(strstr(err_last(), "deadlock") != NULL, "%s", err_last());
	cr_expect(strstr(err_last(), "core 0 insn 1 (recv from core 1)") != NULL, "%s", err_last());
	cr_expect(strstr(err_last(), "core 1 insn 1 (recv from core 0)") != NULL, "%s", err_last());
	spyre_launch_finish(&l);
	spyre_device_destroy(dev);
}

/* Fills a device buffer with m x k values v(i) of `dt` (FLOAT32 or DL16) and the same values as
 * floats in `ref`. Small multiples of 1/4 keep every product and sum exact. */
static void fill_mat(uint8_t *p, float *ref, size_t n, enum spyre_dtype dt, unsigned seed,
		     int exact)
{
	srand(seed);
	for (size_t i = 0; i < n; i++) {
		float f = exact ? (float)(rand() % 17 - 8) / 4.0f
				: (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
		if (dt == SPYRE_DTYPE_DL16) {
			uint16_t h = spyre_dl16_from_f32(f);
			memcpy(p + 2 * i, &h, 2);
			ref[i] = spyre_dl16_to_f32(h);
		} else {
			memcpy(p + 4 * i, &f, 4);
			ref[i] = f;
		}
	}
}

static void matmul_case(enum spyre_dtype dt, int exact, uint32_t m, uint32_t k, uint32_t n)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_device *dev;
	cr_assert_eq(spyre_device_create(&dev, &hw), 0, "%s", err_last());
	size_t es = spyre_dtype_size(dt);
	uint32_t abytes = (uint32_t)(m * k * es), bbytes = (uint32_t)(k * n * es);
	uint32_t asticks = (abytes + 127) / 128, bsticks = (bbytes + 127) / 128;
	uint32_t csticks = (m * n * 4 + 127) / 128;
	struct devbuf a = dev_buf(dev, asticks * 128), b = dev_buf(dev, bsticks * 128);
	struct devbuf c = dev_buf(dev, csticks * 128);
	float *ra = malloc(m * k * sizeof(float)), *rb = malloc(k * n * sizeof(float));
	cr_assert(ra && rb);
	fill_mat(a.p, ra, m * k, dt, 1, exact);
	fill_mat(b.p, rb, k * n, dt, 2, exact);
	uint32_t la = 0, lb = asticks * 128, lc = lb + bsticks * 128;
	struct spyre_launch l;
	spyre_launch_init(&l, 1);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, a.addr, la, asticks, 1));
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, b.addr, lb, bsticks, 1));
	tu_push(&l, 0, tu_mm(la, lb, lc, m, k, n, dt, 0));
	tu_push(&l, 0, tu_mm(la, lb, lc, m, k, n, dt, 1)); /* C = 2 A@B */
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_STORE, c.addr, lc, csticks, 1));
	cr_assert_eq(spyre_launch_validate(&l, &hw), 0, "%s", err_last());
	cr_assert_eq(spyre_launch_execute(&l, dev), 0, "%s", err_last());
	const float *out = (const float *)(const void *)c.p;
	for (uint32_t i = 0; i < m; i++)
		for (uint32_t j = 0; j < n; j++) {
			double s = 0, mag = 0;
			for (uint32_t q = 0; q < k; q++) {
				s += (double)ra[i * k + q] * rb[q * n + j];
				mag += fabs((double)ra[i * k + q] * rb[q * n + j]);
			}
			double got = out[i * n + j], want = 2 * s;
			if (exact)
				cr_assert_eq(got, want, "C[%u][%u] = %g, want %g", i, j, got, want);
			else
				cr_assert_leq(fabs(got - want), 2 * mag * k * 6e-8 + 1e-30,
					      "C[%u][%u] = %g, want %g", i, j, got, want);
		}
	free(ra);
	free(rb);
	spyre_launch_finish(&l);
	spyre_device_destroy(dev);
}

Test(program_exec, matmul_f32_exact)
{
	matmul_case(SPYRE_DTYPE_FLOAT32, 1, 13, 40, 32); /* A is 16.25 sticks */
}

Test(program_exec, matmul_dl16_exact)
{
	matmul_case(SPYRE_DTYPE_DL16, 1, 9, 64, 64);
}

Test(program_exec, matmul_random_within_fp32_rounding)
{
	matmul_case(SPYRE_DTYPE_DL16, 0, 32, 128, 64);
	matmul_case(SPYRE_DTYPE_FLOAT32, 0, 7, 33, 32);
}

Test(program_exec, vec_kernel_runs)
{
	struct spyre_hw hw = tu_hw();
	struct spyre_device *dev;
	cr_assert_eq(spyre_device_create(&dev, &hw), 0, "%s", err_last());
	struct devbuf src = dev_buf(dev, 512), dst = dev_buf(dev, 512);
	float *s = (float *)(void *)src.p, *d = (float *)(void *)dst.p;
	for (int i = 0; i < 128; i++)
		s[i] = (float)(i - 64);
	struct spyre_launch l;
	spyre_launch_init(&l, 1);
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_LOAD, src.addr, 0, 4, 1));
	tu_push(&l, 0, tu_vec1("relu", 0, 512, 4, 32));
	tu_push(&l, 0, tu_dma(SPYRE_OP_DMA_STORE, dst.addr, 512, 4, 1));
	cr_assert_eq(spyre_launch_validate(&l, &hw), 0, "%s", err_last());
	cr_assert_eq(spyre_launch_execute(&l, dev), 0, "%s", err_last());
	for (int i = 0; i < 128; i++)
		cr_assert_eq(d[i], i < 64 ? 0.0f : (float)(i - 64), "element %d", i);
	spyre_launch_finish(&l);
	spyre_device_destroy(dev);
}
