/* Tests of spyre-emu/device: the allocator (alignment, accounting, capacity, coalescing, bad
 * frees, device_ptr bounds, a random run against an exact first-fit model) and streams and
 * events (ordering, cross-stream waits, unsatisfiable waits, errors), and copies through
 * layouts (float32 and float16 -> DL16 round trips, strided hosts, queued copies). */
#include <criterion/criterion.h>
#include <string.h>

#include "common/err.h"
#include "spyre-emu/device.h"
#include "spyre-emu/dl16.h"
#include "spyre-emu/hw.h"
#include <stdlib.h>

#define STICK    128
#define CAP      (64 * 1024) /* 512 sticks */
#define CAP_STKS (CAP / STICK)

/* The shipped description with a small memory, so capacity tests run in kilobytes. */
static struct spyre_hw small_hw(uint64_t mem)
{
	struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_default(&hw), 0, "%s", err_last());
	cr_assert_eq(hw.stick_bytes, STICK);
	hw.dev_mem_bytes = mem;
	return hw;
}

static struct spyre_device *dev_new(uint64_t mem)
{
	struct spyre_hw hw = small_hw(mem);
	struct spyre_device *dev;
	cr_assert_eq(spyre_device_create(&dev, &hw), 0, "%s", err_last());
	return dev;
}

Test(device, destroy_null_and_bad_hw)
{
	spyre_device_destroy(NULL);
	spyre_stream_destroy(NULL);
	spyre_event_destroy(NULL);
	struct spyre_hw hw = small_hw(CAP);
	hw.stick_bytes = 0;
	struct spyre_device *dev = (void *)1;
	cr_expect_eq(spyre_device_create(&dev, &hw), ERR_INVAL);
	cr_expect_null(dev);
	hw = small_hw(64);
	cr_expect_eq(spyre_device_create(&dev, &hw), ERR_INVAL);
}

Test(device, alignment_and_accounting)
{
	struct spyre_device *dev = dev_new(CAP + 100); /* capacity rounds down to sticks */
	cr_expect_eq(spyre_device_capacity(dev), CAP);
	cr_expect_eq(spyre_device_hw(dev)->stick_bytes, STICK);
	uint64_t sizes[] = { 1, 128, 129, 1000, 0 };
	uint64_t want_used = 0, prev_end = SPYRE_DEV_BASE;
	for (size_t i = 0; i < 5; i++) {
		uint64_t a;
		cr_assert_eq(spyre_device_alloc(dev, &a, sizes[i]), 0, "%s", err_last());
		uint64_t rounded = sizes[i] ? (sizes[i] + STICK - 1) / STICK * STICK : STICK;
		cr_expect_eq(a % STICK, 0);
		cr_expect_eq(a, prev_end, "first fit on an empty device packs from the base");
		prev_end = a + rounded;
		want_used += rounded;
		cr_expect_eq(spyre_device_used(dev), want_used);
		unsigned char *p = spyre_device_ptr(dev, a, rounded);
		cr_assert_not_null(p, "%s", err_last());
		for (uint64_t j = 0; j < rounded; j++)
			cr_assert_eq(p[j], 0, "allocation %zu byte %llu not zero", i,
				     (unsigned long long)j);
		memset(p, 0xAB, rounded);
	}
	cr_expect_eq(want_used, 128 + 128 + 256 + 1024 + 128);
	cr_expect_eq(spyre_device_live_allocations(dev), 5);
	spyre_device_destroy(dev); /* frees live allocations (ASan checks) */
}

Test(device, exact_capacity_fill_then_limit)
{
	struct spyre_device *dev = dev_new(CAP);
	uint64_t a;
	cr_expect_eq(spyre_device_alloc(dev, &a, CAP + 1), ERR_LIMIT);
	cr_expect_eq(spyre_device_alloc(dev, &a, UINT64_MAX), ERR_LIMIT);
	for (int i = 0; i < CAP_STKS; i++)
		cr_assert_eq(spyre_device_alloc(dev, &a, STICK), 0, "stick %d: %s", i, err_last());
	cr_expect_eq(spyre_device_used(dev), CAP);
	cr_expect_eq(a, SPYRE_DEV_BASE + CAP - STICK);
	cr_expect_eq(spyre_device_alloc(dev, &a, 1), ERR_LIMIT);
	cr_expect_eq(a, 0);
	cr_expect(strstr(err_last(), "requested 1 bytes") != NULL, "%s", err_last());
	cr_expect(strstr(err_last(), "65536 of 65536") != NULL, "%s", err_last());
	cr_expect_eq(spyre_device_live_allocations(dev), CAP_STKS);
	spyre_device_destroy(dev);

	dev = dev_new(CAP);
	cr_expect_eq(spyre_device_alloc(dev, &a, CAP), 0, "%s", err_last());
	cr_expect_eq(spyre_device_alloc(dev, &a, 1), ERR_LIMIT);
	spyre_device_destroy(dev);
}

Test(device, free_and_reuse)
{
	struct spyre_device *dev = dev_new(CAP);
	uint64_t a[4];
	for (int i = 0; i < 4; i++)
		cr_assert_eq(spyre_device_alloc(dev, &a[i], 1024), 0);
	unsigned char *p = spyre_device_ptr(dev, a[1], 1024);
	memset(p, 7, 1024);
	cr_expect_eq(spyre_device_free(dev, a[1]), 0);
	cr_expect_eq(spyre_device_used(dev), 3 * 1024);
	uint64_t b;
	cr_expect_eq(spyre_device_alloc(dev, &b, 1000), 0);
	cr_expect_eq(b, a[1], "first fit reuses the hole");
	p = spyre_device_ptr(dev, b, 1000);
	cr_expect_eq(p[0], 0, "a reused range is zero-filled again");
	cr_expect_eq(p[999], 0);
	cr_expect_eq(spyre_device_alloc(dev, &b, 1), 0);
	cr_expect_eq(b, a[3] + 1024, "the hole is full: the next goes after the last");
	spyre_device_destroy(dev);
}

Test(device, coalescing_odd_order)
{
	struct spyre_device *dev = dev_new(CAP);
	enum { N = 64 }; /* 64 x 1 KiB fills the device */
	uint64_t a[N];
	for (int i = 0; i < N; i++)
		cr_assert_eq(spyre_device_alloc(dev, &a[i], 1024), 0);
	uint64_t x;
	cr_expect_eq(spyre_device_alloc(dev, &x, 1), ERR_LIMIT);
	/* 37 is coprime with 64: visits every index once in a scattered order */
	for (int k = 0; k < N; k++) {
		int i = (k * 37 + 11) % N;
		cr_assert_eq(spyre_device_free(dev, a[i]), 0, "free %d: %s", i, err_last());
		if (k == N / 2)
			cr_expect_eq(spyre_device_alloc(dev, &x, N / 2 * 1024 + 1), ERR_LIMIT,
				     "half free but fragmented");
	}
	cr_expect_eq(spyre_device_used(dev), 0);
	cr_expect_eq(spyre_device_live_allocations(dev), 0);
	cr_expect_eq(spyre_device_alloc(dev, &x, CAP), 0, "one range again: %s", err_last());
	cr_expect_eq(x, SPYRE_DEV_BASE);
	spyre_device_destroy(dev);
}

Test(device, bad_frees_are_detected)
{
	struct spyre_device *dev = dev_new(CAP);
	uint64_t a, b;
	cr_assert_eq(spyre_device_alloc(dev, &a, 512), 0);
	cr_assert_eq(spyre_device_alloc(dev, &b, 512), 0);
	cr_expect_eq(spyre_device_free(dev, a + STICK), ERR_NOTFOUND);
	cr_expect(strstr(err_last(), "inside allocation") != NULL, "%s", err_last());
	cr_expect_eq(spyre_device_free(dev, 0), ERR_NOTFOUND);
	cr_expect_eq(spyre_device_free(dev, SPYRE_DEV_BASE + CAP), ERR_NOTFOUND);
	cr_expect_eq(spyre_device_free(dev, a), 0);
	cr_expect_eq(spyre_device_free(dev, a), ERR_NOTFOUND);
	cr_expect(strstr(err_last(), "double free") != NULL, "%s", err_last());
	cr_expect_eq(spyre_device_used(dev), 512);
	cr_expect_eq(spyre_device_live_allocations(dev), 1);
	cr_expect_not_null(spyre_device_ptr(dev, b, 512), "b survived");
	cr_expect_eq(spyre_device_free(dev, b), 0);
	cr_expect_eq(spyre_device_alloc(dev, &a, CAP), 0, "state not corrupted: %s", err_last());
	spyre_device_destroy(dev);
}

Test(device, ptr_bounds)
{
	struct spyre_device *dev = dev_new(CAP);
	uint64_t a, b, c;
	cr_assert_eq(spyre_device_alloc(dev, &a, 256), 0);
	cr_assert_eq(spyre_device_alloc(dev, &b, 256), 0);
	cr_assert_eq(spyre_device_alloc(dev, &c, 256), 0);
	unsigned char *pa = spyre_device_ptr(dev, a, 256);
	cr_assert_not_null(pa);
	cr_expect_eq(spyre_device_ptr(dev, a + 10, 246), pa + 10);
	cr_expect_eq(spyre_device_ptr(dev, a + 255, 1), pa + 255);
	cr_expect_null(spyre_device_ptr(dev, a + 10, 247), "crosses into b");
	cr_expect_eq(err_last_code(), ERR_INVAL);
	cr_expect_null(spyre_device_ptr(dev, a, UINT64_MAX));
	cr_expect_null(spyre_device_ptr(dev, 0, 1));
	cr_expect_eq(err_last_code(), ERR_NOTFOUND);
	cr_expect_null(spyre_device_ptr(dev, SPYRE_DEV_BASE - 1, 1));
	cr_expect_null(spyre_device_ptr(dev, c + 256, 1), "past the last allocation");
	cr_expect_eq(spyre_device_free(dev, b), 0);
	cr_expect_null(spyre_device_ptr(dev, b, 1), "freed");
	cr_expect_null(spyre_device_ptr(dev, a + 200, 100), "crosses into the hole");
	cr_expect_not_null(spyre_device_ptr(dev, c, 256));
	spyre_device_destroy(dev);
}

Test(device, full_size_card_is_virtual)
{
	struct spyre_hw hw;
	cr_assert_eq(spyre_hw_load_default(&hw), 0, "%s", err_last());
	cr_assert_eq(hw.dev_mem_bytes, (uint64_t)128 << 30, "the shipped card has 128 GB");
	struct spyre_device *dev; /* nothing of it is allocated */
	cr_assert_eq(spyre_device_create(&dev, &hw), 0, "%s", err_last());
	cr_expect_eq(spyre_device_capacity(dev), (uint64_t)128 << 30);
	uint64_t a, b;
	cr_expect_eq(spyre_device_alloc(dev, &a, (uint64_t)129 << 30), ERR_LIMIT);
	cr_assert_eq(spyre_device_alloc(dev, &a, 1 << 20), 0, "%s", err_last());
	cr_assert_eq(spyre_device_alloc(dev, &b, 100), 0, "%s", err_last());
	cr_expect_eq(b, a + (1 << 20));
	cr_expect_not_null(spyre_device_ptr(dev, a + (1 << 20) - 8, 8));
	cr_expect_eq(spyre_device_used(dev), (1 << 20) + STICK);
	spyre_device_destroy(dev);
}

Test(device, many_allocations_binary_search)
{
	enum { N = 50000 };
	struct spyre_device *dev = dev_new((uint64_t)N * STICK * 2);
	static uint64_t addr[N];
	static unsigned char *host[N];
	for (int i = 0; i < N; i++) {
		cr_assert_eq(spyre_device_alloc(dev, &addr[i], (i % 2) ? STICK : 2 * STICK), 0);
		host[i] = spyre_device_ptr(dev, addr[i], 1);
		cr_assert_not_null(host[i]);
	}
	for (int i = 0; i < N; i += 7) {
		uint64_t len = (i % 2) ? STICK : 2 * STICK;
		cr_assert_eq(spyre_device_ptr(dev, addr[i] + len - 1, 1), host[i] + len - 1, "%d",
			     i);
		cr_assert_null(spyre_device_ptr(dev, addr[i] + len - 1, 2), "%d crosses", i);
	}
	for (int i = 0; i < N; i += 2) /* every other one: N/2 holes */
		cr_assert_eq(spyre_device_free(dev, addr[i]), 0);
	for (int i = 1; i < N; i += 2)
		cr_assert_eq(spyre_device_ptr(dev, addr[i], STICK), host[i], "%d", i);
	cr_expect_null(spyre_device_ptr(dev, addr[N - 2], 1), "freed");
	spyre_device_destroy(dev);
}

/* ---- random operations against a model: a bitmap of sticks, first fit = lowest run ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

struct model {
	unsigned char used[CAP_STKS];
	uint64_t addr[CAP_STKS], len[CAP_STKS];
	unsigned char tag[CAP_STKS];
	int n;
};

static int64_t model_fit(const struct model *m, int sticks)
{
	for (int p = 0; p + sticks <= CAP_STKS; p++) {
		int ok = 1;
		for (int j = 0; j < sticks && ok; j++)
			ok = !m->used[p + j];
		if (ok)
			return p;
	}
	return -1;
}

static void model_mark(struct model *m, uint64_t addr, uint64_t len, unsigned char v)
{
	uint64_t first = (addr - SPYRE_DEV_BASE) / STICK;
	for (uint64_t j = 0; j < len / STICK; j++)
		m->used[first + j] = v;
}

static void random_alloc(struct spyre_device *dev, struct model *m, int op)
{
	uint64_t bytes = rng() % (8 * STICK) + 1;
	int sticks = (int)((bytes + STICK - 1) / STICK);
	int64_t p = model_fit(m, sticks);
	uint64_t a;
	int rc = spyre_device_alloc(dev, &a, bytes);
	if (p < 0) {
		cr_assert_eq(rc, ERR_LIMIT, "op %d: model says full", op);
		return;
	}
	cr_assert_eq(rc, 0, "op %d: %s", op, err_last());
	cr_assert_eq(a, SPYRE_DEV_BASE + (uint64_t)p * STICK, "op %d: not first fit", op);
	model_mark(m, a, (uint64_t)sticks * STICK, 1);
	m->addr[m->n] = a;
	m->len[m->n] = (uint64_t)sticks * STICK;
	m->tag[m->n] = (unsigned char)(op | 1);
	memset(spyre_device_ptr(dev, a, m->len[m->n]), m->tag[m->n], m->len[m->n]);
	m->n++;
}

static void random_free(struct spyre_device *dev, struct model *m, int op)
{
	int i = (int)(rng() % (uint64_t)m->n);
	const unsigned char *p = spyre_device_ptr(dev, m->addr[i], m->len[i]);
	cr_assert_not_null(p, "op %d: %s", op, err_last());
	for (uint64_t j = 0; j < m->len[i]; j++)
		cr_assert_eq(p[j], m->tag[i], "op %d: allocation contents clobbered", op);
	cr_assert_eq(spyre_device_free(dev, m->addr[i]), 0, "op %d: %s", op, err_last());
	cr_assert_eq(spyre_device_free(dev, m->addr[i]), ERR_NOTFOUND, "op %d: double free", op);
	model_mark(m, m->addr[i], m->len[i], 0);
	m->n--;
	m->addr[i] = m->addr[m->n];
	m->len[i] = m->len[m->n];
	m->tag[i] = m->tag[m->n];
}

Test(device, random_ops_match_first_fit_model)
{
	static struct model m;
	memset(&m, 0, sizeof(m));
	struct spyre_device *dev = dev_new(CAP);
	for (int op = 0; op < 20000; op++) {
		/* drift between mostly-allocating and mostly-freeing phases */
		int alloc_bias = (op / 2000) % 2 ? 35 : 65;
		if (m.n == 0 || (int)(rng() % 100) < alloc_bias)
			random_alloc(dev, &m, op);
		else
			random_free(dev, &m, op);
		uint64_t used = 0;
		for (int i = 0; i < m.n; i++)
			used += m.len[i];
		cr_assert_eq(spyre_device_used(dev), used, "op %d", op);
		cr_assert_eq(spyre_device_live_allocations(dev), (size_t)m.n, "op %d", op);
	}
	while (m.n > 0)
		random_free(dev, &m, -1);
	uint64_t a;
	cr_expect_eq(spyre_device_alloc(dev, &a, CAP), 0, "all coalesced: %s", err_last());
	spyre_device_destroy(dev);
}

/* ---- streams and events ---- */

struct tlog {
	char text[256];
	int fail_at; /* the task with this id fails */
};

struct tstep {
	struct tlog *log;
	char id;
};

static int log_task(struct spyre_device *dev, void *ctx)
{
	(void)dev;
	struct tstep *t = ctx;
	size_t n = strlen(t->log->text);
	cr_assert_lt(n + 1, sizeof(t->log->text));
	if (t->log->fail_at == t->id)
		return err_set(ERR_INVAL, "task %c: boom", t->id);
	t->log->text[n] = t->id;
	t->log->text[n + 1] = 0;
	return 0;
}

/* Queues tasks named by the letters of `ids` (steps must outlive the run). */
static void put(struct spyre_stream *s, struct tlog *log, struct tstep *steps, const char *ids)
{
	for (size_t i = 0; ids[i]; i++) {
		steps[i] = (struct tstep){ log, ids[i] };
		cr_assert_eq(spyre_stream_enqueue(s, log_task, &steps[i]), 0, "%s", err_last());
	}
}

struct sfix {
	struct spyre_device *dev;
	struct spyre_stream *s1, *s2;
	struct spyre_event *e;
	struct tlog log;
	struct tstep st1[16], st2[16], st3[16];
};

static void sfix_init(struct sfix *f)
{
	memset(f, 0, sizeof(*f));
	f->log.fail_at = -1;
	f->dev = dev_new(CAP);
	cr_assert_eq(spyre_stream_create(f->dev, &f->s1), 0);
	cr_assert_eq(spyre_stream_create(f->dev, &f->s2), 0);
	cr_assert_eq(spyre_event_create(f->dev, &f->e), 0);
}

static void sfix_finish(struct sfix *f)
{
	spyre_event_destroy(f->e);
	spyre_stream_destroy(f->s1);
	spyre_stream_destroy(f->s2);
	spyre_device_destroy(f->dev);
}

Test(stream, in_order)
{
	struct sfix f;
	sfix_init(&f);
	struct tstep many[40];
	put(f.s1, &f.log, many, "abcdefghijklmnopqrstuvwxyz0123456789"); /* grows the ring */
	cr_expect_str_empty(f.log.text, "nothing runs before synchronize");
	cr_expect_eq(spyre_stream_synchronize(f.s1), 0);
	cr_expect_str_eq(f.log.text, "abcdefghijklmnopqrstuvwxyz0123456789");
	put(f.s1, &f.log, f.st1, "XY");
	put(f.s2, &f.log, f.st2, "Z");
	cr_expect_eq(spyre_device_synchronize(f.dev), 0);
	cr_expect_str_eq(f.log.text, "abcdefghijklmnopqrstuvwxyz0123456789XYZ");
	cr_expect_eq(spyre_stream_enqueue(f.s1, NULL, NULL), ERR_INVAL);
	sfix_finish(&f);
}

Test(stream, event_orders_across_streams)
{
	struct sfix f;
	sfix_init(&f);
	put(f.s2, &f.log, f.st2, "a");
	cr_assert_eq(spyre_stream_wait_event(f.s2, f.e), 0); /* recorded later: waits for it */
	put(f.s2, &f.log, f.st2 + 1, "b");
	put(f.s1, &f.log, f.st1, "xy");
	cr_assert_eq(spyre_event_record(f.e, f.s1), 0);
	put(f.s1, &f.log, f.st1 + 2, "z");
	cr_expect_eq(spyre_event_query(f.e), 0);
	cr_expect_eq(spyre_stream_synchronize(f.s2), 0, "%s", err_last());
	cr_expect_str_eq(f.log.text, "axyb", "s1 advanced only up to the record");
	cr_expect_eq(spyre_event_query(f.e), 1);
	cr_expect_eq(spyre_stream_synchronize(f.s1), 0);
	cr_expect_str_eq(f.log.text, "axybz");
	/* a wait on a completed event is a no-op */
	cr_expect_eq(spyre_stream_wait_event(f.s2, f.e), 0);
	put(f.s2, &f.log, f.st3, "c");
	cr_expect_eq(spyre_stream_synchronize(f.s2), 0);
	cr_expect_str_eq(f.log.text, "axybzc");
	sfix_finish(&f);
}

Test(stream, rerecord_binds_waits_to_latest)
{
	struct sfix f;
	sfix_init(&f);
	cr_expect_eq(spyre_event_query(f.e), 1, "never recorded: nothing pending");
	put(f.s1, &f.log, f.st1, "a");
	cr_assert_eq(spyre_event_record(f.e, f.s1), 0);
	cr_assert_eq(spyre_stream_wait_event(f.s2, f.e), 0); /* binds to the first record */
	put(f.s2, &f.log, f.st2, "w");
	put(f.s1, &f.log, f.st1 + 1, "b");
	cr_assert_eq(spyre_event_record(f.e, f.s1), 0);
	struct spyre_stream *s3;
	cr_assert_eq(spyre_stream_create(f.dev, &s3), 0);
	cr_assert_eq(spyre_stream_wait_event(s3, f.e), 0); /* binds to the second record */
	put(s3, &f.log, f.st3, "v");
	cr_expect_eq(spyre_stream_synchronize(f.s2), 0);
	cr_expect_str_eq(f.log.text, "aw");
	cr_expect_eq(spyre_event_query(f.e), 0, "the latest record has not run");
	cr_expect_eq(spyre_stream_synchronize(s3), 0);
	cr_expect_str_eq(f.log.text, "awbv");
	cr_expect_eq(spyre_event_query(f.e), 1);
	spyre_stream_destroy(s3);
	sfix_finish(&f);
}

Test(stream, unsatisfiable_waits_are_badstate)
{
	struct sfix f;
	sfix_init(&f);
	cr_assert_eq(spyre_stream_wait_event(f.s1, f.e), 0);
	put(f.s1, &f.log, f.st1, "a");
	cr_expect_eq(spyre_stream_synchronize(f.s1), ERR_BADSTATE);
	cr_expect(strstr(err_last(), "never recorded") != NULL, "%s", err_last());
	cr_expect_eq(spyre_device_synchronize(f.dev), ERR_BADSTATE);
	cr_expect_str_empty(f.log.text);
	/* recording it afterwards releases the wait */
	put(f.s2, &f.log, f.st2, "r");
	cr_assert_eq(spyre_event_record(f.e, f.s2), 0);
	cr_expect_eq(spyre_stream_synchronize(f.s1), 0, "%s", err_last());
	cr_expect_str_eq(f.log.text, "ra");

	/* a cycle: s1 waits for e2 recorded on s2 after s2 waits for e1 recorded on s1 later */
	struct spyre_event *e1, *e2;
	cr_assert_eq(spyre_event_create(f.dev, &e1), 0);
	cr_assert_eq(spyre_event_create(f.dev, &e2), 0);
	cr_assert_eq(spyre_stream_wait_event(f.s1, e2), 0);
	cr_assert_eq(spyre_event_record(e1, f.s1), 0);
	cr_assert_eq(spyre_stream_wait_event(f.s2, e1), 0);
	cr_assert_eq(spyre_event_record(e2, f.s2), 0);
	cr_expect_eq(spyre_stream_synchronize(f.s1), ERR_BADSTATE);
	cr_expect(strstr(err_last(), "cycle") != NULL, "%s", err_last());
	cr_expect_eq(spyre_stream_synchronize(f.s2), ERR_BADSTATE);
	/* a stream waiting for its own later record */
	struct spyre_stream *s3;
	cr_assert_eq(spyre_stream_create(f.dev, &s3), 0);
	struct spyre_event *e3;
	cr_assert_eq(spyre_event_create(f.dev, &e3), 0);
	cr_assert_eq(spyre_stream_wait_event(s3, e3), 0);
	cr_assert_eq(spyre_event_record(e3, s3), 0);
	cr_expect_eq(spyre_stream_synchronize(s3), ERR_BADSTATE);
	spyre_stream_destroy(s3); /* drops what cannot run, no leak, no hang */
	spyre_event_destroy(e1);
	spyre_event_destroy(e2);
	spyre_event_destroy(e3);
	sfix_finish(&f);
}

Test(stream, errors_drop_rest_and_propagate)
{
	struct sfix f;
	sfix_init(&f);
	f.log.fail_at = 'b';
	put(f.s1, &f.log, f.st1, "abc");
	cr_assert_eq(spyre_event_record(f.e, f.s1), 0);
	put(f.s1, &f.log, f.st1 + 3, "d");
	cr_assert_eq(spyre_stream_wait_event(f.s2, f.e), 0);
	put(f.s2, &f.log, f.st2, "x");
	cr_expect_eq(spyre_stream_synchronize(f.s2), ERR_INVAL, "the waiter inherits the error");
	cr_expect(strstr(err_last(), "failed") != NULL, "%s", err_last());
	cr_expect_str_eq(f.log.text, "a", "x did not run after a failed dependency");
	put(f.s1, &f.log, f.st1 + 4, "e");
	cr_expect_eq(spyre_stream_synchronize(f.s1), ERR_INVAL);
	cr_expect(strstr(err_last(), "task b: boom") != NULL, "%s", err_last());
	cr_expect_str_eq(f.log.text, "a", "c, d and e dropped");
	cr_expect_eq(spyre_stream_synchronize(f.s1), 0, "reported once");
	put(f.s1, &f.log, f.st1 + 5, "f");
	cr_expect_eq(spyre_stream_synchronize(f.s1), 0);
	cr_expect_str_eq(f.log.text, "af", "the stream works again");

	/* device synchronize reports the earliest failure */
	f.log.fail_at = 'q';
	put(f.s2, &f.log, f.st2 + 1, "pq");
	f.st3[0] = (struct tstep){ &f.log, 'q' };
	cr_assert_eq(spyre_stream_enqueue(f.s1, log_task, &f.st3[0]), 0);
	cr_expect_eq(spyre_device_synchronize(f.dev), ERR_INVAL);
	cr_expect(strstr(err_last(), "stream 0") != NULL, "s1 failed first: %s", err_last());
	cr_expect_eq(spyre_device_synchronize(f.dev), 0);
	cr_expect_str_eq(f.log.text, "afp");
	sfix_finish(&f);
}

static int reenter_task(struct spyre_device *dev, void *ctx)
{
	struct spyre_stream *s = ctx;
	int rc = spyre_stream_synchronize(s);
	cr_expect_eq(rc, ERR_BADSTATE);
	cr_expect_eq(spyre_device_synchronize(dev), ERR_BADSTATE);
	return rc;
}

Test(stream, reentry_refused_and_destroy_drains)
{
	struct sfix f;
	sfix_init(&f);
	cr_assert_eq(spyre_stream_enqueue(f.s1, reenter_task, f.s1), 0);
	cr_expect_eq(spyre_stream_synchronize(f.s1), ERR_BADSTATE);
	cr_expect(strstr(err_last(), "inside a task") != NULL, "%s", err_last());
	put(f.s2, &f.log, f.st2, "ab");
	spyre_stream_destroy(f.s2);
	f.s2 = NULL;
	cr_expect_str_eq(f.log.text, "ab", "destroy drains first");
	put(f.s1, &f.log, f.st1, "c");
	spyre_event_destroy(f.e);
	f.e = NULL;
	spyre_device_destroy(f.dev); /* drains the stream still alive */
	cr_expect_str_eq(f.log.text, "abc");
}

/* ---- copies (host <-> device through layouts) ---- */

#define COPY_CAP (4 * 1024 * 1024)

/* Host values exactly representable in both IEEE half and DL16 (integers below 512, halves). */
static float copy_value(size_t i)
{
	return (float)((int)(i % 1021) - 510) * 0.5f;
}

static void *dev_bytes(struct spyre_device *dev, uint64_t addr, const struct spyre_layout *l)
{
	void *p = spyre_device_ptr(dev, addr, spyre_layout_bytes(l));
	cr_assert_not_null(p, "%s", err_last());
	return p;
}

Test(copy, float32_round_trip_unaligned)
{
	struct spyre_device *dev = dev_new(COPY_CAP);
	int64_t shape[3] = { 3, 7, 45 }; /* 45 floats: 2 sticks of 32, padded */
	struct spyre_layout l;
	cr_assert_eq(spyre_layout_default(&l, shape, 3, SPYRE_DTYPE_FLOAT32), 0, "%s", err_last());
	size_t n = 3 * 7 * 45;
	float *host = malloc(n * sizeof(float)), *back = calloc(n, sizeof(float));
	cr_assert(host && back);
	for (size_t i = 0; i < n; i++)
		host[i] = copy_value(i) + 0.125f;
	uint64_t a;
	cr_assert_eq(spyre_device_alloc(dev, &a, spyre_layout_bytes(&l)), 0);
	cr_assert_eq(spyre_copy_to_device(dev, NULL, a, &l, host, NULL), 0, "%s", err_last());
	const float *d = dev_bytes(dev, a, &l);
	cr_expect_eq(d[0], host[0]);
	cr_expect_eq(d[1], host[1]);
	/* device_size [7, 2, 3, 32]: stick (h1, chunk, h0) */
	cr_assert_eq(l.ndim, 4);
	cr_expect_eq(l.device_size[1], 2);
	cr_expect_eq(l.device_size[3], 32);
	cr_expect_eq(d[1 * 32], host[1 * 7 * 45], "stick 1 is host row (0, 0) of h0 = 1");
	cr_expect_eq(d[3 * 32 + 12], host[44], "stick 3 is the second chunk of row (0, 0)");
	for (int k = 13; k < 32; k++)
		cr_expect_eq(d[3 * 32 + k], 0.0f, "padding slot %d is zero", k);
	cr_assert_eq(spyre_copy_to_host(dev, NULL, back, NULL, a, &l), 0, "%s", err_last());
	cr_expect_arr_eq(back, host, n * sizeof(float));
	free(host);
	free(back);
	spyre_device_destroy(dev);
}

Test(copy, float16_round_trip_becomes_dl16)
{
	struct spyre_device *dev = dev_new(COPY_CAP);
	int64_t shape[3] = { 5, 10, 150 }; /* docs/emu.md's example, smaller: 150 -> 3 sticks */
	struct spyre_layout l;
	cr_assert_eq(spyre_layout_default(&l, shape, 3, SPYRE_DTYPE_FLOAT16), 0, "%s", err_last());
	cr_expect_eq(l.device_dtype, SPYRE_DTYPE_DL16);
	size_t n = 5 * 10 * 150;
	uint16_t *host = malloc(n * 2), *back = calloc(n, 2);
	cr_assert(host && back);
	for (size_t i = 0; i < n; i++)
		host[i] = spyre_half_from_f32(copy_value(i));
	uint64_t a;
	cr_assert_eq(spyre_device_alloc(dev, &a, spyre_layout_bytes(&l)), 0);
	cr_assert_eq(spyre_copy_to_device(dev, NULL, a, &l, host, NULL), 0, "%s", err_last());
	const uint16_t *d = dev_bytes(dev, a, &l);
	cr_expect_eq(spyre_dl16_to_f32(d[0]), copy_value(0), "device holds DL16");
	cr_expect_eq(spyre_dl16_to_f32(d[3]), copy_value(3));
	cr_expect_neq(d[3], host[3], "DL16 bits differ from IEEE half bits");
	cr_assert_eq(spyre_copy_to_host(dev, NULL, back, NULL, a, &l), 0, "%s", err_last());
	cr_expect_arr_eq(back, host, n * 2);
	free(host);
	free(back);
	spyre_device_destroy(dev);
}

Test(copy, strided_host_view)
{
	struct spyre_device *dev = dev_new(COPY_CAP);
	enum { R = 9, C = 33 };
	static float base[C][R], back[R][C]; /* the tensor is the transpose of `base` */
	for (int c = 0; c < C; c++)
		for (int r = 0; r < R; r++)
			base[c][r] = (float)(r * 100 + c);
	int64_t shape[2] = { R, C }, strides[2] = { 1, R };
	struct spyre_layout l;
	cr_assert_eq(spyre_layout_default(&l, shape, 2, SPYRE_DTYPE_FLOAT32), 0);
	uint64_t a;
	cr_assert_eq(spyre_device_alloc(dev, &a, spyre_layout_bytes(&l)), 0);
	cr_assert_eq(spyre_copy_to_device(dev, NULL, a, &l, base, strides), 0, "%s", err_last());
	cr_assert_eq(spyre_copy_to_host(dev, NULL, back, NULL, a, &l), 0, "%s", err_last());
	for (int r = 0; r < R; r++)
		for (int c = 0; c < C; c++)
			cr_assert_eq(back[r][c], (float)(r * 100 + c), "[%d][%d]", r, c);
	spyre_device_destroy(dev);
}

Test(copy, queued_on_streams_and_bad_ranges)
{
	struct spyre_device *dev = dev_new(COPY_CAP);
	int64_t shape[1] = { 100 };
	struct spyre_layout l;
	cr_assert_eq(spyre_layout_default(&l, shape, 1, SPYRE_DTYPE_FLOAT32), 0);
	float host[100], back[100];
	for (int i = 0; i < 100; i++)
		host[i] = (float)i;
	memset(back, 0, sizeof(back));
	uint64_t a, small;
	cr_assert_eq(spyre_device_alloc(dev, &a, spyre_layout_bytes(&l)), 0);
	cr_assert_eq(spyre_device_alloc(dev, &small, 128), 0);
	struct spyre_stream *s1, *s2;
	struct spyre_event *e;
	cr_assert_eq(spyre_stream_create(dev, &s1), 0);
	cr_assert_eq(spyre_stream_create(dev, &s2), 0);
	cr_assert_eq(spyre_event_create(dev, &e), 0);
	cr_assert_eq(spyre_copy_to_device(dev, s1, a, &l, host, NULL), 0, "%s", err_last());
	cr_assert_eq(spyre_event_record(e, s1), 0);
	cr_assert_eq(spyre_stream_wait_event(s2, e), 0);
	cr_assert_eq(spyre_copy_to_host(dev, s2, back, NULL, a, &l), 0, "%s", err_last());
	const float *d = dev_bytes(dev, a, &l);
	cr_expect_eq(d[5], 0.0f, "queued: nothing copied yet");
	cr_assert_eq(spyre_stream_synchronize(s2), 0, "%s", err_last());
	cr_expect_arr_eq(back, host, sizeof(host));

	cr_expect_eq(spyre_copy_to_device(dev, NULL, small, &l, host, NULL), ERR_INVAL,
		     "400 bytes do not fit in one stick");
	cr_expect(strstr(err_last(), "crosses the end") != NULL, "%s", err_last());
	cr_expect_eq(spyre_copy_to_host(dev, s1, back, NULL, a + COPY_CAP, &l), ERR_NOTFOUND);
	cr_expect_eq(spyre_copy_to_device(dev, NULL, a, NULL, host, NULL), ERR_INVAL);
	/* freed after queuing: the copy fails when it runs, as the stream's error */
	cr_assert_eq(spyre_copy_to_device(dev, s1, a, &l, host, NULL), 0);
	cr_assert_eq(spyre_device_free(dev, a), 0);
	cr_expect_eq(spyre_stream_synchronize(s1), ERR_NOTFOUND);
	cr_expect(strstr(err_last(), "copy to device") != NULL, "%s", err_last());
	spyre_event_destroy(e);
	spyre_stream_destroy(s1);
	spyre_stream_destroy(s2);
	spyre_device_destroy(dev);
}
