/* The plan choice cache (plan_cache.h): which candidate plan was fastest for an op on concrete
 * shapes, dtype, parameters, core count and hardware, with its modeled timing. The same key
 * builds the same candidate launches, so the choice and the timing are pure functions of it.
 * Kept per thread in memory (the last PLAN_CACHE_ENTRIES choices) and, when a directory is
 * given, on disk: one small file per key, named by the key's digest, renamed into place; a file
 * that does not read back as exactly one record for exactly this key is ignored. */
#include "plan_cache.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fsutil.h"

#define PLAN_CACHE_ENTRIES 32
#define PLAN_CACHE_MAGIC   "spyre-emu plan v2"

struct plan_entry {
	int used;
	struct plan_key key;
	char plan[SPYRE_PLAN_NAME_MAX];
	struct spyre_timing timing; /* critical path owned; no schedule */
};

static _Thread_local struct plan_entry cache[PLAN_CACHE_ENTRIES];
static _Thread_local unsigned cache_next;

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

uint64_t plan_cache_hw_digest(const struct spyre_hw *h)
{
	/* every number the planner or the timing model reads; not the name or the labels */
	double d[2] = { h->dev_mem_gbps, h->clock_ghz };
	uint64_t u[15] = { (uint64_t)h->cores,
			   (uint64_t)h->corelets_per_core,
			   (uint64_t)h->pe_rows,
			   (uint64_t)h->pe_cols,
			   h->lx_bytes,
			   h->stick_bytes,
			   h->ring_bytes_per_cycle,
			   h->ring_hop_cycles,
			   h->dev_mem_bytes,
			   h->window_bytes,
			   h->vec_elems_per_cycle,
			   h->transcendental_factor,
			   h->dma_setup_cycles,
			   h->pe_simd_lanes,
			   0 };
	return fnv(fnv(1469598103934665603ull, d, sizeof(d)), u, sizeof(u));
}

/* Field by field (a struct's padding is not hashed). */
static uint64_t params_ext_digest(const struct spyre_op_params *p)
{
	uint64_t h = fnv(1469598103934665603ull, p->shape, sizeof(p->shape));
	h = fnv(h, &p->shape_ndim, sizeof(p->shape_ndim));
	for (int i = 0; i < p->n_index && i < SPYRE_INDEX_MAX; i++) {
		const struct spyre_index_item *it = &p->index[i];
		int f[3] = { (int)it->kind, it->has_start, it->has_stop };
		int64_t v[3] = { it->start, it->stop, it->step };
		h = fnv(h, f, sizeof(f));
		h = fnv(h, v, sizeof(v));
	}
	int f[4] = { p->n_index, p->has_out_dtype, (int)p->out_dtype, p->has_scale };
	h = fnv(h, f, sizeof(f));
	return fnv(h, &p->scale, sizeof(p->scale));
}

void plan_cache_key(struct plan_key *k, const char *op, enum spyre_dtype dtype, int nin,
		    const int64_t shapes[][SPYRE_DIMS_MAX], const int *ndims,
		    const struct spyre_op_params *p, const struct spyre_hw *hw)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->op, sizeof(k->op), "%s", op);
	k->dtype = (int)dtype;
	k->nin = nin;
	for (int i = 0; i < nin && i < SPYRE_OP_INPUTS_MAX; i++) {
		k->ndims[i] = ndims[i];
		for (int d = 0; d < ndims[i] && d < SPYRE_DIMS_MAX; d++)
			k->shapes[i][d] = shapes[i][d];
	}
	k->pd[0] = p->scalar, k->pd[1] = p->scalar2, k->pd[2] = p->eps;
	k->pi[0] = p->has_min, k->pi[1] = p->has_max, k->pi[2] = p->dim, k->pi[3] = p->keepdim;
	k->pi[4] = p->approximate_tanh, k->pi[5] = p->causal;
	for (int d = 0; d < SPYRE_DIMS_MAX; d++)
		k->pi[6 + d] = p->perm[d];
	k->pext = params_ext_digest(p);
	k->cores = hw->cores;
	k->hw = plan_cache_hw_digest(hw);
}

static int timing_copy(struct spyre_timing *dst, const struct spyre_timing *src)
{
	*dst = *src;
	dst->sched = NULL;
	dst->nsched = 0;
	dst->critical = NULL;
	dst->ncritical = 0;
	if (src->ncritical) {
		dst->critical = malloc(src->ncritical * sizeof(*src->critical));
		if (!dst->critical)
			return err_set(ERR_NOMEM, "out of memory copying a timing");
		memcpy(dst->critical, src->critical, src->ncritical * sizeof(*src->critical));
		dst->ncritical = src->ncritical;
	}
	return 0;
}

/* ---- on disk ---- */

struct plan_record {
	char magic[24];
	struct plan_key key;
	char plan[SPYRE_PLAN_NAME_MAX];
	struct spyre_timing timing; /* pointers stored as NULL, counts as 0 */
};

static void record_path(char *out, size_t n, const char *dir, const struct plan_key *k)
{
	snprintf(out, n, "%s/%016llx.plan", dir,
		 (unsigned long long)fnv(1469598103934665603ull, k, sizeof(*k)));
}

int plan_cache__decode(const void *buf, size_t len, const struct plan_key *k, char *plan,
		       struct spyre_timing *t)
{
	struct plan_record r;
	if (len != sizeof(r))
		return ERR_INVAL;
	memcpy(&r, buf, sizeof(r));
	if (memcmp(r.magic, PLAN_CACHE_MAGIC, sizeof(PLAN_CACHE_MAGIC)) != 0 ||
	    memcmp(&r.key, k, sizeof(*k)) != 0 || !memchr(r.plan, '\0', sizeof(r.plan)) ||
	    r.timing.ncores != k->cores || !(r.timing.us >= 0))
		return ERR_INVAL;
	memcpy(plan, r.plan, sizeof(r.plan));
	*t = r.timing;
	t->critical = NULL, t->ncritical = 0;
	t->sched = NULL, t->nsched = 0;
	return 0;
}

static int disk_get(const char *dir, const struct plan_key *k, char *plan, struct spyre_timing *t)
{
	char path[4096];
	record_path(path, sizeof(path), dir, k);
	char *text = NULL;
	size_t len = 0;
	if (fs_read_file(&text, &len, path, sizeof(struct plan_record) + 1) != 0) {
		err_clear();
		return 0;
	}
	int ok = plan_cache__decode(text, len, k, plan, t) == 0;
	free(text);
	return ok;
}

static void disk_put(const char *dir, const struct plan_key *k, const char *plan,
		     const struct spyre_timing *t)
{
	struct plan_record r;
	memset(&r, 0, sizeof(r));
	memcpy(r.magic, PLAN_CACHE_MAGIC, sizeof(PLAN_CACHE_MAGIC));
	r.key = *k;
	snprintf(r.plan, sizeof(r.plan), "%s", plan);
	r.timing = *t;
	r.timing.critical = NULL, r.timing.ncritical = 0;
	r.timing.sched = NULL, r.timing.nsched = 0;
	char path[4096], tmp[4200];
	record_path(path, sizeof(path), dir, k);
	/* a temporary file renamed into place, so a reader sees a whole record or none; not
	 * fsynced: a record lost in a crash is only a miss, and a sync per kernel case would cost
	 * more than the planning it saves */
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	int ok = fs_write_all(fd, &r, sizeof(r)) == 0;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, path) != 0)
		unlink(tmp);
	err_clear(); /* a cache that cannot be written is only slower */
}

/* ---- in memory ---- */

int plan_cache_get(const struct plan_key *k, const char *dir, char *plan, struct spyre_timing *t)
{
	for (int i = 0; i < PLAN_CACHE_ENTRIES; i++)
		if (cache[i].used && memcmp(&cache[i].key, k, sizeof(*k)) == 0) {
			if (timing_copy(t, &cache[i].timing) != 0)
				return 0;
			memcpy(plan, cache[i].plan, SPYRE_PLAN_NAME_MAX);
			return 1;
		}
	if (!dir || !disk_get(dir, k, plan, t))
		return 0;
	plan_cache_put(k, NULL, plan, t); /* remembered in memory too */
	return 1;
}

void plan_cache_put(const struct plan_key *k, const char *dir, const char *plan,
		    const struct spyre_timing *t)
{
	struct plan_entry *e = &cache[cache_next++ % PLAN_CACHE_ENTRIES];
	if (e->used)
		spyre_timing_finish(&e->timing);
	e->used = 0;
	if (timing_copy(&e->timing, t) != 0) {
		err_clear();
		return;
	}
	e->key = *k;
	snprintf(e->plan, sizeof(e->plan), "%s", plan);
	e->used = 1;
	if (dir)
		disk_put(dir, k, plan, t);
}

void plan_cache_release(void)
{
	for (int i = 0; i < PLAN_CACHE_ENTRIES; i++) {
		if (cache[i].used)
			spyre_timing_finish(&cache[i].timing);
		cache[i].used = 0;
	}
}
