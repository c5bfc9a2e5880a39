/* Tests of the plan choice cache: a choice made cold is found again in memory and, after the
 * memory is emptied, on disk, with the same plan and modeled time; a damaged record on disk is
 * ignored (the choice is made again); and the pruned search picks what timing every candidate
 * picks. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "spyre-emu/hw.h"
#include "spyre-emu/run.h"

static void mm_opts(struct spyre_run_opts *o, struct spyre_hw *hw, const char *dir)
{
	cr_assert_eq(spyre_hw_load_default(hw), 0);
	spyre_run_opts_init(o);
	o->op = "mm";
	o->dtype = SPYRE_DTYPE_FLOAT16;
	o->hw = hw;
	o->nin = 2;
	o->ndims[0] = o->ndims[1] = 2;
	o->shapes[0][0] = 300, o->shapes[0][1] = 520;
	o->shapes[1][0] = 520, o->shapes[1][1] = 190;
	o->plan_cache_dir = dir;
}

static int run(const struct spyre_run_opts *o, struct spyre_run_result *r)
{
	cr_assert_eq(spyre_run(o, r), 0, "%s", err_last());
	cr_expect(r->passed);
	return r->plan_cached;
}

/* The one record file in dir. */
static void record_in(const char *dir, char *path, size_t n)
{
	DIR *d = opendir(dir);
	cr_assert(d != NULL);
	int found = 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		if (strstr(e->d_name, ".plan"))
			snprintf(path, n, "%s/%s", dir, e->d_name), found++;
	closedir(d);
	cr_assert_eq(found, 1);
}

Test(plan_cache, memory_then_disk_then_a_damaged_record)
{
	char dir[] = "/tmp/spyre-emu-plan-cache-XXXXXX";
	cr_assert(mkdtemp(dir) != NULL);
	struct spyre_hw hw;
	struct spyre_run_opts o;
	mm_opts(&o, &hw, dir);
	struct spyre_run_result cold, mem, disk, again;
	spyre_run_release_caches();
	cr_expect_eq(run(&o, &cold), 0, "cold");
	cr_expect_eq(run(&o, &mem), 1, "from memory");
	spyre_run_release_caches();
	cr_expect_eq(run(&o, &disk), 1, "from disk");
	cr_expect_str_eq(disk.plan, cold.plan);
	cr_expect_eq(disk.timing.cycles, cold.timing.cycles);
	cr_expect_str_eq(disk.digest, cold.digest);
	char path[600];
	record_in(dir, path, sizeof(path));
	FILE *f = fopen(path, "r+b");
	cr_assert(f != NULL);
	fseek(f, 30, SEEK_SET);
	fputc('!', f); /* inside the stored key */
	fclose(f);
	spyre_run_release_caches();
	cr_expect_eq(run(&o, &again), 0, "a damaged record is a miss");
	cr_expect_str_eq(again.plan, cold.plan);
	/* another core count is another key */
	cr_assert_eq(spyre_hw_set_cores(&hw, 5), 0);
	struct spyre_run_result other;
	cr_expect_eq(run(&o, &other), 0);
	spyre_run_result_finish(&cold), spyre_run_result_finish(&mem);
	spyre_run_result_finish(&disk), spyre_run_result_finish(&again);
	spyre_run_result_finish(&other);
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d)) != NULL;)
		if (strstr(e->d_name, ".plan"))
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name), unlink(path);
	if (d)
		closedir(d);
	rmdir(dir);
	spyre_run_release_caches();
}

Test(plan_cache, pruned_search_chooses_what_timing_everything_chooses)
{
	static const char *const cases[][3] = {
		{ "mm", "1024x1024", "1024x1024" },
		{ "mm", "63x2880", "2880x64" },
		{ "mm", "4096x256", "256x512" },
		{ "mm", "7x5", "5x3" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct spyre_hw hw;
		struct spyre_run_opts o;
		mm_opts(&o, &hw, NULL);
		o.skip_reference = 1;
		sscanf(cases[i][1], "%" SCNd64 "x%" SCNd64, &o.shapes[0][0], &o.shapes[0][1]);
		sscanf(cases[i][2], "%" SCNd64 "x%" SCNd64, &o.shapes[1][0], &o.shapes[1][1]);
		struct spyre_plan_info *p;
		size_t n;
		cr_assert_eq(spyre_run_plans(&o, &p, &n), 0, "%s", err_last());
		spyre_run_release_caches();
		struct spyre_run_result r;
		cr_assert_eq(spyre_run(&o, &r), 0, "%s", err_last());
		cr_expect_str_eq(r.plan, p[0].name, "%s x %s", cases[i][1], cases[i][2]);
		cr_expect_eq(r.timing.cycles, p[0].cycles);
		spyre_run_result_finish(&r);
		free(p);
	}
}
