/* Internals shared by device.c (memory) and stream.c (streams, events): the device itself.
 * Not part of the contract; only the emulator's own sources include it. */
#ifndef SPYRE_EMU_DEVICE_PRIV_H
#define SPYRE_EMU_DEVICE_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "spyre-emu/device.h"

struct dev_range { /* a free range of device addresses */
	uint64_t start, len;
};

struct dev_alloc { /* a live allocation and the host memory behind it */
	uint64_t addr, len;
	unsigned char *host;
};

struct spyre_device {
	struct spyre_hw hw;
	uint64_t stick;         /* bytes per stick */
	uint64_t capacity;      /* bytes, a whole number of sticks */
	uint64_t used;          /* bytes, a whole number of sticks */
	struct dev_range *free; /* sorted by start, never adjacent (coalesced) */
	size_t nfree, free_cap;
	struct dev_alloc *allocs; /* sorted by addr */
	size_t nallocs, allocs_cap;
	struct spyre_stream **streams; /* in creation order */
	size_t nstreams, streams_cap;
	uint64_t next_stream_id;
	uint64_t err_seq; /* orders task errors across streams */
	int in_task;      /* a task is running: synchronizing now would re-enter */
};

/* Queues a task that owns `ctx`: `cleanup(ctx)` runs after the task ran or was dropped, and
 * also when queuing fails. */
int spyre_stream__enqueue_owned(struct spyre_stream *s, spyre_task_fn fn, void *ctx,
				void (*cleanup)(void *ctx));

/* Drains and frees every stream still alive (device teardown). */
void spyre_stream__destroy_all(struct spyre_device *dev);

#endif
