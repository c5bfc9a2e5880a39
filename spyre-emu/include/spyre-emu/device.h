/* The emulated card: device memory with a stick-aligned allocator and capacity accounting,
 * streams and events in the spirit of PyTorch's OpenReg reference backend (work on one stream
 * runs in order; an event recorded on one stream and waited on by another orders work across
 * them), and host<->device copies that convert formats (host float16 <-> DL16) and layouts.
 * Device memory is virtual: addresses are numbers in [SPYRE_DEV_BASE, base + capacity), each
 * allocation backed by host memory only as large as it is. */
#ifndef SPYRE_EMU_DEVICE_H
#define SPYRE_EMU_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "spyre-emu/hw.h"
#include "spyre-emu/layout.h"

#define SPYRE_DEV_BASE ((uint64_t)1 << 32) /* 0 is never a valid device address */

/* Limits of one device (each hit is ERR_LIMIT naming it). */
#define SPYRE_DEV_ALLOCS_MAX   ((size_t)1 << 20) /* live allocations */
#define SPYRE_DEV_STREAMS_MAX  256               /* live streams */
#define SPYRE_STREAM_TASKS_MAX ((size_t)1 << 20) /* queued tasks per stream */

struct spyre_device;
struct spyre_stream;
struct spyre_event;

/* The device keeps its own copy of `hw`. */
int spyre_device_create(struct spyre_device **out, const struct spyre_hw *hw);
void spyre_device_destroy(struct spyre_device *dev); /* NULL is a no-op */
const struct spyre_hw *spyre_device_hw(const struct spyre_device *dev);

/* Allocates `bytes` rounded up to whole sticks (0 bytes takes one), zero-filled, stick-aligned,
 * first fit (lowest address). ERR_LIMIT (out of device memory, naming what is in use) or
 * ERR_NOMEM. */
int spyre_device_alloc(struct spyre_device *dev, uint64_t *addr, uint64_t bytes);
/* ERR_NOTFOUND for an address that is not the start of a live allocation (a double free, or
 * the middle of one). */
int spyre_device_free(struct spyre_device *dev, uint64_t addr);
uint64_t spyre_device_used(const struct spyre_device *dev);     /* bytes, rounded to sticks */
uint64_t spyre_device_capacity(const struct spyre_device *dev); /* hw->dev_mem_bytes */
size_t spyre_device_live_allocations(const struct spyre_device *dev);

/* Host pointer of device bytes [addr, addr + len) when they lie inside one live allocation,
 * else NULL with err_last() saying why. For the executor and copies, not for users. */
void *spyre_device_ptr(struct spyre_device *dev, uint64_t addr, uint64_t len);

/* ---- streams and events ----
 * Work is queued as tasks and runs when the stream is synchronized (or the device is), in
 * order per stream. A stream blocked on an event that is recorded later on another stream
 * waits for it; a wait on an event that can never be recorded is an error (ERR_BADSTATE), not
 * a hang. */
typedef int (*spyre_task_fn)(struct spyre_device *dev, void *ctx);

int spyre_stream_create(struct spyre_device *dev, struct spyre_stream **out);
void spyre_stream_destroy(struct spyre_stream *s); /* drains it first; NULL is a no-op */
/* Queues fn(dev, ctx) on the stream. */
int spyre_stream_enqueue(struct spyre_stream *s, spyre_task_fn fn, void *ctx);
int spyre_event_create(struct spyre_device *dev, struct spyre_event **out);
void spyre_event_destroy(struct spyre_event *e);
int spyre_event_record(struct spyre_event *e, struct spyre_stream *s);
/* A wait binds to the event's latest record at the time of the wait, or, if the event was
 * never recorded, to its next record. A wait on a record whose stream failed passes that
 * failure on to the waiting stream. */
int spyre_stream_wait_event(struct spyre_stream *s, struct spyre_event *e);
/* 1 when done (or never recorded, as in CUDA), 0 when pending. */
int spyre_event_query(const struct spyre_event *e);
/* Runs queued work until the stream is empty; returns the first task error (once: the stream
 * drops its later tasks until the error is reported, then works again). Not from inside a
 * task (ERR_BADSTATE). The device form reports the earliest error of all streams. */
int spyre_stream_synchronize(struct spyre_stream *s);
int spyre_device_synchronize(struct spyre_device *dev);

/* ---- copies (queued on a stream; NULL stream = run now) ----
 * Host tensor of `l->host_dtype` with `host_strides` (elements) -> device bytes at `addr` in
 * layout `l` (float16 becomes DL16 on the way), and back. The host memory must stay valid
 * until the copy has run. */
int spyre_copy_to_device(struct spyre_device *dev, struct spyre_stream *s, uint64_t addr,
			 const struct spyre_layout *l, const void *host,
			 const int64_t *host_strides);
int spyre_copy_to_host(struct spyre_device *dev, struct spyre_stream *s, void *host,
		       const int64_t *host_strides, uint64_t addr, const struct spyre_layout *l);

#endif
