/* bench-specs: the speed of loading spec files and resolving test ids, each figure printed beside
 * a floor measured in the same run (the ratio is what to track). Two parts:
 *   1. Load and merge: N generated spec files (a few hundred entries each, plain and regex names,
 *      in a temporary directory) through testspecs_load_dir, plus building the resolver's index,
 *      against reading the same files' bytes.
 *   2. Resolve: M test ids (listed plain, regex-matched, device-generic with ops and dtypes,
 *      unlisted, in no file) through testspecs_resolver_resolve on one core, against bsearch +
 *      strcmp of the same ids in a sorted table.
 * Targets: load under 50 ms for 50 files, resolve under 2 us per id. Never asserts a
 * time: exits 1 when a run fails or a figure is not sane (no id eligible, zero time), 2 on bad
 * usage. --smoke (the default test run) uses small sizes. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "testspecs/resolve.h"
#include "testspecs/spec.h"

#define FILES_FULL    50
#define ENTRIES_FULL  300
#define IDS_FULL      10000
#define FILES_SMOKE   5
#define ENTRIES_SMOKE 40
#define IDS_SMOKE     1000
#define REPS          3
#define FILE_TEXT_MAX (4 * 1024 * 1024)

struct cfg {
	int smoke, files, entries, ids;
};

struct figs {
	double load_s, index_s, read_s;
	double resolve_s, floor_s;
	int eligible, n_entries_total;
	size_t bytes;
};

static const char *const ops[] = { "add", "sub", "mul", "div", "mm", "bmm", "softmax", "gelu" };
#define N_OPS (sizeof ops / sizeof ops[0])

/* One spec file: entries mostly plain Class::method, every 10th a regex, every 7th with
 * edits, all under test/test_gen_<f>.py. */
static int gen_file(const char *dir, int f, int entries, size_t *bytes)
{
	struct buf b;
	buf_init(&b, FILE_TEXT_MAX);
	int rc = buf_appendf(&b,
			     "test_suite_config:\n  labels: [regression]\n  files:\n"
			     "    - path: ${TORCH_ROOT}/test/test_gen_%d.py\n"
			     "      unlisted_test_mode: %s\n      tests:\n",
			     f, f % 2 ? "skip" : "xfail");
	for (int e = 0; e < entries && rc == 0; e++) {
		if (e % 10 == 9)
			rc = buf_appendf(&b, "        - names: [\"TestGen%d.*::test_re%d_.*\"]\n",
					 f, e);
		else
			rc = buf_appendf(
			    &b, "        - names: [TestGen%d::test_case%d, \".*::test_m%d\"]\n", f,
			    e, e);
		if (rc == 0)
			rc = buf_appendf(&b, "          mode: %s\n          tags: [t%d]\n",
					 e % 3 ? "mandatory_success" : "xfail", e % 5);
		if (rc == 0 && e % 7 == 0)
			rc = buf_appendf(
			    &b, "          edits:\n            ops: {exclude: [{name: sub}]}\n"
				"            dtypes: {include: [{name: bfloat16}], "
				"exclude: [{name: int64}]}\n");
	}
	if (rc == 0 && f == 0) {
		rc = buf_appendf(&b, "  global:\n    supported_dtypes: [{name: float16}, "
				     "{name: float32, force_xfail: true}, {name: int64}]\n"
				     "    supported_ops:\n");
		for (size_t i = 0; i < N_OPS && rc == 0; i++)
			rc = buf_appendf(&b, "      - {name: %s%s}\n", ops[i],
					 i == 2 ? ", force_xfail: true" : "");
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/gen_%03d.yaml", dir, f);
	if (rc == 0)
		rc = fs_atomic_write(path, b.data, b.len, 0644);
	*bytes += b.len;
	buf_finish(&b);
	return rc;
}

/* The ids: a mix of every path through the resolver. */
static int gen_ids(char ***out, const struct cfg *c)
{
	char **ids = calloc((size_t)c->ids, sizeof *ids);
	if (!ids)
		return err_set(ERR_NOMEM, "ids");
	for (int i = 0; i < c->ids; i++) {
		int f = i % c->files, e = (i / c->files) % c->entries;
		char s[512];
		switch (i % 6) {
		case 0: /* listed, plain */
			snprintf(s, sizeof s, "test/test_gen_%d.py::TestGen%d::test_case%d", f, f,
				 e);
			break;
		case 1: /* regex entry */
			snprintf(s, sizeof s, "test/test_gen_%d.py::TestGen%dX::test_re%d_foo", f,
				 f, (e / 10) * 10 + 9);
			break;
		case 2: /* device-generic, ops-parametrised */
			snprintf(s, sizeof s,
				 "test/test_gen_%d.py::TestGen%dPRIVATEUSE1::test_m%d_%s_spyre_%s",
				 f, f, e, ops[i % N_OPS], i % 4 ? "float16" : "float32");
			break;
		case 3: /* unlisted */
			snprintf(s, sizeof s, "test/test_gen_%d.py::TestGen%d::test_nothing%d", f,
				 f, i);
			break;
		case 4: /* method-only name, another class */
			snprintf(s, sizeof s, "test/test_gen_%d.py::TestOther::test_m%d", f, e);
			break;
		default: /* in no file */
			snprintf(s, sizeof s, "test/test_elsewhere.py::T::test_x%d", i);
		}
		ids[i] = strdup(s);
		if (!ids[i])
			return err_set(ERR_NOMEM, "id");
	}
	*out = ids;
	return 0;
}

static double best_of(double a, double b)
{
	return a == 0 || b < a ? b : a;
}

static int load_once(const char *dir, struct spec_set **set, struct spec_resolver **r,
		     struct figs *fg)
{
	uint64_t t0 = clock_mono_ns();
	int rc = testspecs_set_create(set);
	struct spec_diag_list diags;
	testspecs_diags_init(&diags);
	struct spec_load_opts o = { .diags = &diags };
	if (rc == 0)
		rc = testspecs_load_dir(*set, dir, &o);
	uint64_t t1 = clock_mono_ns();
	if (rc == 0)
		rc = testspecs_resolver_create(r, *set);
	uint64_t t2 = clock_mono_ns();
	if (rc && diags.n) {
		char line[512];
		testspecs_diag_format(&diags.v[0], line, sizeof line);
		err_set(rc, "%s", line);
	}
	testspecs_diags_finish(&diags);
	fg->load_s = best_of(fg->load_s, clock_elapsed_s(t0, t1));
	fg->index_s = best_of(fg->index_s, clock_elapsed_s(t1, t2));
	return rc;
}

/* Floor for loading: read every file's bytes. */
static int read_floor(const char *dir, const struct cfg *c, struct figs *fg)
{
	uint64_t t0 = clock_mono_ns();
	size_t total = 0;
	for (int f = 0; f < c->files; f++) {
		char path[4096], *text;
		size_t len;
		snprintf(path, sizeof path, "%s/gen_%03d.yaml", dir, f);
		int rc = fs_read_file(&text, &len, path, FILE_TEXT_MAX);
		if (rc)
			return rc;
		total += len + (size_t)text[0];
		free(text);
	}
	fg->read_s = best_of(fg->read_s, clock_elapsed_s(t0, clock_mono_ns()));
	return total ? 0 : err_set(ERR_GENERIC, "read nothing");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Floor for resolving: look each id up in a sorted table of the ids (bsearch + strcmp). */
static int lookup_floor(char **ids, const struct cfg *c, struct figs *fg)
{
	char **sorted = malloc((size_t)c->ids * sizeof *sorted);
	if (!sorted)
		return err_set(ERR_NOMEM, "sorted ids");
	memcpy(sorted, ids, (size_t)c->ids * sizeof *sorted);
	qsort(sorted, (size_t)c->ids, sizeof *sorted, cmp_str);
	int found = 0;
	uint64_t t0 = clock_mono_ns();
	for (int i = 0; i < c->ids; i++)
		found += bsearch(&ids[i], sorted, (size_t)c->ids, sizeof *sorted, cmp_str) != NULL;
	fg->floor_s = best_of(fg->floor_s, clock_elapsed_s(t0, clock_mono_ns()));
	free(sorted);
	return found == c->ids ? 0 : err_set(ERR_GENERIC, "floor lookup lost ids");
}

static int resolve_all(const struct spec_resolver *r, char **ids, const struct cfg *c,
		       struct figs *fg)
{
	struct spec_decision *d = malloc(sizeof *d);
	if (!d)
		return err_set(ERR_NOMEM, "decision");
	int eligible = 0, rc = 0;
	struct spec_resolve_opts o = { .tier = "regression" };
	uint64_t t0 = clock_mono_ns();
	for (int i = 0; i < c->ids && rc == 0; i++) {
		rc = testspecs_resolver_resolve(r, ids[i], &o, d);
		eligible += d->eligible;
	}
	fg->resolve_s = best_of(fg->resolve_s, clock_elapsed_s(t0, clock_mono_ns()));
	fg->eligible = eligible;
	free(d);
	return rc;
}

static int run(const struct cfg *c, struct figs *fg)
{
	char dir[] = "/tmp/bench-specs-XXXXXX";
	if (!mkdtemp(dir))
		return err_set_errno(ERR_IO, "mkdtemp");
	int rc = 0;
	for (int f = 0; f < c->files && rc == 0; f++)
		rc = gen_file(dir, f, c->entries, &fg->bytes);
	char **ids = NULL;
	if (rc == 0)
		rc = gen_ids(&ids, c);
	for (int rep = 0; rep < REPS && rc == 0; rep++) {
		struct spec_set *set = NULL;
		struct spec_resolver *r = NULL;
		rc = load_once(dir, &set, &r, fg);
		if (rc == 0)
			rc = read_floor(dir, c, fg);
		if (rc == 0)
			rc = resolve_all(r, ids, c, fg);
		if (rc == 0)
			rc = lookup_floor(ids, c, fg);
		testspecs_resolver_destroy(r);
		testspecs_set_destroy(set);
	}
	for (int i = 0; ids && i < c->ids; i++)
		free(ids[i]);
	free(ids);
	for (int f = 0; f < c->files; f++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/gen_%03d.yaml", dir, f);
		unlink(path);
	}
	rmdir(dir);
	return rc;
}

int main(int argc, char **argv)
{
	struct cfg c = { 0, FILES_FULL, ENTRIES_FULL, IDS_FULL };
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--smoke") == 0) {
			c = (struct cfg){ 1, FILES_SMOKE, ENTRIES_SMOKE, IDS_SMOKE };
		} else {
			fprintf(stderr, "usage: bench-specs [--smoke]\n");
			return 2;
		}
	}
	struct figs fg = { 0 };
	if (run(&c, &fg)) {
		fprintf(stderr, "bench-specs: %s\n", err_last());
		return 1;
	}
	double per_id = fg.resolve_s / c.ids, floor_id = fg.floor_s / c.ids;
	printf("bench-specs%s: %d files x %d entries (%zu bytes), %d ids, best of %d\n",
	       c.smoke ? " (smoke)" : "", c.files, c.entries, fg.bytes, c.ids, REPS);
	printf("  load+merge  %8.2f ms   read floor %8.3f ms   ratio %6.1fx   (target < 50 ms)\n",
	       fg.load_s * 1e3, fg.read_s * 1e3, fg.load_s / fg.read_s);
	printf("  index       %8.2f ms   (regexes compiled, plain names sorted)\n",
	       fg.index_s * 1e3);
	printf("  resolve     %8.3f us/id floor     %8.3f us/id ratio %6.1fx   (target < 2 us)\n",
	       per_id * 1e6, floor_id * 1e6, per_id / floor_id);
	printf("  eligible    %d of %d\n", fg.eligible, c.ids);
	if (fg.eligible == 0 || fg.eligible == c.ids || fg.resolve_s <= 0 || fg.load_s <= 0) {
		fprintf(stderr, "bench-specs: figures not sane\n");
		return 1;
	}
	return 0;
}
