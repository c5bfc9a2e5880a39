/* Streams and events of the emulated card, in the spirit of PyTorch's OpenReg reference
 * backend but deterministic and single-threaded: a stream is an in-order queue of tasks that
 * runs only when it (or the device) is synchronized.
 *
 * DESIGN. Each record of an event is a `mark`: a small refcounted object that the event points
 * at (its latest record), that a marker task on the recording stream completes when it runs,
 * and that wait tasks on other streams hold. A wait binds to the event's current mark at the
 * time of the wait (CUDA's rule); if the event was never recorded, it binds to the first
 * record that comes later. A stream whose next task is a wait on an unfinished mark advances
 * the mark's stream just far enough to finish it (recursively); a stream already in that chain
 * is a cycle and a mark with no recording stream can never finish: both are ERR_BADSTATE, and
 * the waiting tasks stay queued. A task that fails makes its stream drop every later task
 * (marks it carries complete with the error, and waits on them pass the error on) until a
 * synchronize reports it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/err.h"
#include "common/log.h"
#include "device-priv.h"

#define STREAM_ERRMSG_MAX 512

struct mark {
	unsigned refs;
	int recorded;                /* a record task was queued for it */
	int done;                    /* that task has run (or was dropped) */
	int err;                     /* the recording stream's error when it completed */
	struct spyre_stream *stream; /* recording stream until done, else NULL */
};

enum task_kind { TASK_USER, TASK_RECORD, TASK_WAIT };

struct task {
	enum task_kind kind;
	spyre_task_fn fn;
	void *ctx;
	void (*cleanup)(void *ctx); /* frees ctx after the task ran or was dropped */
	struct mark *mark;          /* RECORD and WAIT: one reference */
};

struct spyre_stream {
	struct spyre_device *dev;
	uint64_t id;
	struct task *q; /* ring buffer */
	size_t head, n, cap;
	uint64_t ran; /* tasks run so far, to name a failing one */
	int visiting; /* on the chain of streams being advanced */
	int err;      /* first task error not yet reported, 0 if none */
	uint64_t err_seq;
	char errmsg[STREAM_ERRMSG_MAX];
};

struct spyre_event {
	struct spyre_device *dev;
	struct mark *cur; /* the latest record, or the coming first one */
};

static struct mark *mark_new(void)
{
	struct mark *m = calloc(1, sizeof(*m));
	if (m)
		m->refs = 1;
	return m;
}

static void mark_release(struct mark *m)
{
	if (m && --m->refs == 0)
		free(m);
}

/* ---- queue ---- */

static int queue_reserve(struct spyre_stream *s)
{
	if (s->n < s->cap)
		return 0;
	if (s->n >= SPYRE_STREAM_TASKS_MAX)
		return err_set(ERR_LIMIT,
			       "stream %" PRIu64 ": %zu queued tasks (SPYRE_STREAM_TASKS_MAX)",
			       s->id, s->n);
	size_t ncap = s->cap ? s->cap * 2 : 16;
	struct task *q = malloc(ncap * sizeof(*q));
	if (!q)
		return err_set(ERR_NOMEM, "stream %" PRIu64 ": out of host memory for %zu tasks",
			       s->id, ncap);
	for (size_t i = 0; i < s->n; i++)
		q[i] = s->q[(s->head + i) % s->cap];
	free(s->q);
	s->q = q;
	s->cap = ncap;
	s->head = 0;
	return 0;
}

/* Appends a task; the caller has reserved room with queue_reserve(). */
static void queue_push(struct spyre_stream *s, struct task t)
{
	s->q[(s->head + s->n) % s->cap] = t;
	s->n++;
}

static struct task queue_pop(struct spyre_stream *s)
{
	struct task t = s->q[s->head];
	s->head = (s->head + 1) % s->cap;
	s->n--;
	return t;
}

/* ---- running ---- */

static void stream_fail(struct spyre_stream *s, int code, const char *detail)
{
	if (s->err)
		return;
	s->err = code < 0 ? code : ERR_GENERIC;
	s->err_seq = ++s->dev->err_seq;
	snprintf(s->errmsg, sizeof(s->errmsg), "stream %" PRIu64 ", task %" PRIu64 ": %.400s",
		 s->id, s->ran, detail);
}

/* Runs (or, once the stream has failed, drops) one task popped from the stream. */
static void task_run(struct spyre_stream *s, struct task *t)
{
	s->ran++;
	switch (t->kind) {
	case TASK_USER:
		if (!s->err) {
			err_clear();
			s->dev->in_task = 1;
			int rc = t->fn(s->dev, t->ctx);
			s->dev->in_task = 0;
			if (rc)
				stream_fail(s, rc, err_last()[0] ? err_last() : "task failed");
		}
		break;
	case TASK_RECORD:
		t->mark->done = 1;
		t->mark->err = s->err;
		t->mark->stream = NULL;
		break;
	case TASK_WAIT:
		if (!s->err && t->mark->err) {
			char detail[128];
			snprintf(detail, sizeof(detail),
				 "waited on an event recorded on a stream that failed (%s)",
				 err_code_name(t->mark->err));
			stream_fail(s, t->mark->err, detail);
		}
		break;
	}
	mark_release(t->mark);
	if (t->cleanup)
		t->cleanup(t->ctx);
}

/* Runs the tasks of `s` in order until it is empty or `until` is done, advancing the streams
 * it waits on as far as needed. ERR_BADSTATE for a wait that can never be satisfied. */
static int stream_advance(struct spyre_stream *s, const struct mark *until)
{
	int rc = 0;
	s->visiting = 1;
	while (s->n > 0 && !(until && until->done)) {
		struct task *head = &s->q[s->head];
		if (head->kind == TASK_WAIT && !s->err && !head->mark->done) {
			struct mark *m = head->mark;
			if (!m->recorded || !m->stream) {
				rc = err_set(ERR_BADSTATE,
					     "stream %" PRIu64 " waits on an event that was never "
					     "recorded (or was destroyed unrecorded)",
					     s->id);
				break;
			}
			if (m->stream->visiting) {
				rc = err_set(
				    ERR_BADSTATE,
				    "stream %" PRIu64 " waits on an event that stream %" PRIu64
				    " records only after work that is itself waiting: a cycle",
				    s->id, m->stream->id);
				break;
			}
			rc = stream_advance(m->stream, m);
			if (rc)
				break;
			continue;
		}
		struct task t = queue_pop(s);
		task_run(s, &t);
	}
	if (!rc && until && !until->done)
		rc = err_set(ERR_BADSTATE,
			     "stream %" PRIu64 " emptied before its event was reached", s->id);
	s->visiting = 0;
	return rc;
}

/* Reports and clears the stream's error; `rc` otherwise. */
static int stream_report(struct spyre_stream *s, int rc)
{
	if (!s->err)
		return rc;
	int code = s->err;
	s->err = 0;
	return err_set(code, "%s", s->errmsg);
}

int spyre_stream_synchronize(struct spyre_stream *s)
{
	if (s->dev->in_task)
		return err_set(ERR_BADSTATE, "stream %" PRIu64 ": synchronize called inside a task",
			       s->id);
	return stream_report(s, stream_advance(s, NULL));
}

int spyre_device_synchronize(struct spyre_device *dev)
{
	if (dev->in_task)
		return err_set(ERR_BADSTATE, "device: synchronize called inside a task");
	int rc = 0;
	char first[STREAM_ERRMSG_MAX] = "";
	for (size_t i = 0; i < dev->nstreams; i++) {
		int r = stream_advance(dev->streams[i], NULL);
		if (r && !rc) {
			rc = r;
			snprintf(first, sizeof(first), "%s", err_last());
		}
	}
	struct spyre_stream *earliest = NULL;
	for (size_t i = 0; i < dev->nstreams; i++) {
		struct spyre_stream *s = dev->streams[i];
		if (s->err && (!earliest || s->err_seq < earliest->err_seq))
			earliest = s;
	}
	if (earliest) {
		for (size_t i = 0; i < dev->nstreams; i++)
			if (dev->streams[i] != earliest && dev->streams[i]->err)
				log_warn("device synchronize: also failed: %s",
					 dev->streams[i]->errmsg);
		for (size_t i = 0; i < dev->nstreams; i++)
			if (dev->streams[i] != earliest)
				dev->streams[i]->err = 0;
		return stream_report(earliest, rc);
	}
	return rc ? err_set(rc, "%s", first) : 0;
}

/* ---- streams ---- */

int spyre_stream_create(struct spyre_device *dev, struct spyre_stream **out)
{
	*out = NULL;
	if (dev->nstreams >= SPYRE_DEV_STREAMS_MAX)
		return err_set(ERR_LIMIT, "device: %zu live streams (SPYRE_DEV_STREAMS_MAX)",
			       dev->nstreams);
	if (dev->nstreams == dev->streams_cap) {
		size_t ncap = dev->streams_cap ? dev->streams_cap * 2 : 8;
		void *p = realloc(dev->streams, ncap * sizeof(*dev->streams));
		if (!p)
			return err_set(ERR_NOMEM, "device: out of host memory for streams");
		dev->streams = p;
		dev->streams_cap = ncap;
	}
	struct spyre_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(ERR_NOMEM, "device: out of host memory for a stream");
	s->dev = dev;
	s->id = dev->next_stream_id++;
	dev->streams[dev->nstreams++] = s;
	*out = s;
	return 0;
}

/* Drops every queued task (a stream being destroyed that cannot drain). */
static void stream_drop_all(struct spyre_stream *s, int code, const char *why)
{
	stream_fail(s, code, why);
	while (s->n > 0) {
		struct task t = queue_pop(s);
		task_run(s, &t);
	}
}

static void stream_free(struct spyre_stream *s)
{
	int rc = stream_advance(s, NULL);
	if (rc || s->err) {
		log_warn("stream %" PRIu64 " destroyed: %s", s->id,
			 s->err ? s->errmsg : err_last());
		stream_drop_all(s, rc ? rc : s->err, "stream destroyed before its work could run");
	}
	struct spyre_device *dev = s->dev;
	for (size_t i = 0; i < dev->nstreams; i++)
		if (dev->streams[i] == s) {
			memmove(&dev->streams[i], &dev->streams[i + 1],
				(dev->nstreams - i - 1) * sizeof(*dev->streams));
			dev->nstreams--;
			break;
		}
	free(s->q);
	free(s);
}

void spyre_stream_destroy(struct spyre_stream *s)
{
	if (!s)
		return;
	if (!CHECK(!s->dev->in_task))
		return; /* destroying a stream from inside a task: leak rather than corrupt */
	stream_free(s);
}

void spyre_stream__destroy_all(struct spyre_device *dev)
{
	while (dev->nstreams > 0)
		stream_free(dev->streams[dev->nstreams - 1]);
}

int spyre_stream__enqueue_owned(struct spyre_stream *s, spyre_task_fn fn, void *ctx,
				void (*cleanup)(void *ctx))
{
	int rc = queue_reserve(s);
	if (rc) {
		if (cleanup)
			cleanup(ctx);
		return rc;
	}
	queue_push(s, (struct task){ TASK_USER, fn, ctx, cleanup, NULL });
	return 0;
}

int spyre_stream_enqueue(struct spyre_stream *s, spyre_task_fn fn, void *ctx)
{
	if (!fn)
		return err_set(ERR_INVAL, "stream %" PRIu64 ": enqueue of a NULL task", s->id);
	return spyre_stream__enqueue_owned(s, fn, ctx, NULL);
}

/* ---- events ---- */

int spyre_event_create(struct spyre_device *dev, struct spyre_event **out)
{
	*out = NULL;
	struct spyre_event *e = calloc(1, sizeof(*e));
	struct mark *m = mark_new();
	if (!e || !m) {
		free(e);
		free(m);
		return err_set(ERR_NOMEM, "device: out of host memory for an event");
	}
	e->dev = dev;
	e->cur = m;
	*out = e;
	return 0;
}

void spyre_event_destroy(struct spyre_event *e)
{
	if (!e)
		return;
	mark_release(e->cur); /* queued records and waits keep their own references */
	free(e);
}

int spyre_event_record(struct spyre_event *e, struct spyre_stream *s)
{
	if (e->dev != s->dev)
		return err_set(ERR_INVAL,
			       "event record: event and stream %" PRIu64
			       " belong to different devices",
			       s->id);
	int rc = queue_reserve(s);
	if (rc)
		return rc;
	struct mark *m = e->cur;
	if (m->recorded) { /* a re-record: later waits bind to the new one */
		m = mark_new();
		if (!m)
			return err_set(ERR_NOMEM, "event record: out of host memory");
		mark_release(e->cur);
		e->cur = m;
	}
	m->recorded = 1;
	m->stream = s;
	m->refs++; /* the record task's reference */
	queue_push(s, (struct task){ TASK_RECORD, NULL, NULL, NULL, m });
	return 0;
}

int spyre_stream_wait_event(struct spyre_stream *s, struct spyre_event *e)
{
	if (e->dev != s->dev)
		return err_set(ERR_INVAL,
			       "stream %" PRIu64 " wait: event belongs to a different device",
			       s->id);
	struct mark *m = e->cur;
	if (m->done && !m->err)
		return 0; /* already complete: nothing to wait for */
	int rc = queue_reserve(s);
	if (rc)
		return rc;
	m->refs++; /* the wait task's reference */
	queue_push(s, (struct task){ TASK_WAIT, NULL, NULL, NULL, m });
	return 0;
}

int spyre_event_query(const struct spyre_event *e)
{
	/* Like CUDA and OpenReg, an event never recorded has nothing pending. */
	return !e->cur->recorded || e->cur->done;
}
