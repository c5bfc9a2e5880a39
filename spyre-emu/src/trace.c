/* The kept schedule of a timing run as Chrome trace-event JSON ({"traceEvents": [...]}), for
 * Perfetto or chrome://tracing: one process per core ("core N"), one thread per unit, one
 * complete ("ph": "X") event per instruction with its start and duration in microseconds and
 * its cycles, index and size in args. Written atomically (fs_atomic_write). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/jsonx.h"
#include "spyre-emu/kernels.h"
#include "spyre-emu/timing.h"

static int meta(json_t *events, const char *what, int pid, int tid, const char *name)
{
	json_t *e = json_object(), *args = json_object();
	int rc = e && args ? 0 : ERR_NOMEM;
	if (rc == 0)
		rc = jx_set_str(args, "name", name);
	if (rc == 0)
		rc = jx_set_str(e, "name", what);
	if (rc == 0)
		rc = jx_set_str(e, "ph", "M");
	if (rc == 0)
		rc = jx_set_int(e, "pid", pid);
	if (rc == 0 && tid >= 0)
		rc = jx_set_int(e, "tid", tid);
	if (rc == 0) {
		rc = jx_set_new(e, "args", args); /* e owns args now */
		args = NULL;
	}
	json_decref(args);
	if (rc == 0)
		return jx_append_new(events, e); /* events owns e */
	json_decref(e);
	return err_set(ERR_NOMEM, "trace: metadata event");
}

static int insn_args(json_t *args, const struct spyre_insn *in, const struct spyre_sched *s)
{
	int rc = jx_set_int(args, "insn", s->insn);
	if (rc == 0)
		rc = jx_set_int(args, "start_cycle", (int64_t)s->start);
	if (rc == 0)
		rc = jx_set_int(args, "end_cycle", (int64_t)s->end);
	if (rc < 0 || !in)
		return rc;
	switch (in->op) {
	case SPYRE_OP_DMA_LOAD:
	case SPYRE_OP_DMA_STORE:
		rc = jx_set_int(args, "sticks", (int64_t)in->u.dma.sticks * in->u.dma.rows);
		break;
	case SPYRE_OP_MATMUL: {
		char shape[64];
		snprintf(shape, sizeof(shape), "%" PRIu32 "x%" PRIu32 "x%" PRIu32, in->u.mm.m,
			 in->u.mm.k, in->u.mm.n);
		rc = jx_set_str(args, "mkn", shape);
		break;
	}
	case SPYRE_OP_VEC:
		if (in->u.vec.kernel < spyre_kernels_count)
			rc = jx_set_str(args, "kernel", spyre_kernels[in->u.vec.kernel].name);
		break;
	case SPYRE_OP_SEND:
	case SPYRE_OP_RECV:
		rc = jx_set_int(args, "peer", in->u.ring.peer);
		if (rc == 0)
			rc = jx_set_int(args, "bytes", in->u.ring.bytes);
		break;
	case SPYRE_OP_BARRIER:
		break;
	}
	return rc;
}

static int event(json_t *events, const struct spyre_sched *s, const struct spyre_launch *l,
		 double us_per_cycle)
{
	const struct spyre_insn *in = NULL;
	if (s->core >= 0 && s->core < l->ncores && s->insn < l->prog[s->core].n)
		in = &l->prog[s->core].insns[s->insn];
	json_t *e = json_object(), *args = json_object();
	int rc = e && args ? 0 : ERR_NOMEM;
	if (rc == 0)
		rc = jx_set_str(e, "name", in ? spyre_opcode_name(in->op) : "?");
	if (rc == 0)
		rc = jx_set_str(e, "ph", "X");
	if (rc == 0)
		rc = jx_set_real(e, "ts", (double)s->start * us_per_cycle);
	if (rc == 0)
		rc = jx_set_real(e, "dur", (double)(s->end - s->start) * us_per_cycle);
	if (rc == 0)
		rc = jx_set_int(e, "pid", s->core);
	if (rc == 0)
		rc = jx_set_int(e, "tid", (int)s->unit);
	if (rc == 0)
		rc = insn_args(args, in, s);
	if (rc == 0) {
		rc = jx_set_new(e, "args", args); /* e owns args now */
		args = NULL;
	}
	json_decref(args);
	if (rc == 0)
		return jx_append_new(events, e); /* events owns e */
	json_decref(e);
	return err_set(ERR_NOMEM, "trace: event of core %d insn %" PRIu32, s->core, s->insn);
}

static int fill(json_t *events, const struct spyre_timing *t, const struct spyre_launch *l)
{
	double us_per_cycle = t->cycles ? t->us / (double)t->cycles : 1e-3;
	int rc = 0;
	for (int c = 0; c < t->ncores && rc == 0; c++) {
		char name[32];
		snprintf(name, sizeof(name), "core %d", c);
		rc = meta(events, "process_name", c, -1, name);
		for (int u = 0; u < SPYRE_UNIT_COUNT && rc == 0; u++)
			rc = meta(events, "thread_name", c, u, spyre_unit_name((enum spyre_unit)u));
	}
	for (size_t i = 0; i < t->nsched && rc == 0; i++)
		rc = event(events, &t->sched[i], l, us_per_cycle);
	return rc;
}

int spyre_timing_write_trace(const struct spyre_timing *t, const struct spyre_launch *l,
			     const char *path)
{
	if (t->nsched == 0 && t->cycles > 0)
		return err_set(ERR_BADSTATE,
			       "trace %s: the timing run kept no schedule "
			       "(keep_schedule)",
			       path);
	json_t *root = json_object(), *events = json_array();
	if (!root || !events) {
		json_decref(root);
		json_decref(events);
		return err_set(ERR_NOMEM, "trace %s", path);
	}
	int rc = jx_set_new(root, "traceEvents", events); /* root owns events now */
	if (rc == 0)
		rc = jx_set_str(root, "displayTimeUnit", "ns");
	if (rc == 0)
		rc = fill(events, t, l);
	char *text = rc == 0 ? jx_dumps(root) : NULL;
	if (rc == 0 && !text)
		rc = err_set(ERR_NOMEM, "trace %s: serializing", path);
	if (rc == 0)
		rc = fs_atomic_write(path, text, strlen(text), 0644);
	if (rc < 0)
		err_prefix("trace %s", path);
	free(text);
	json_decref(root);
	return rc;
}
