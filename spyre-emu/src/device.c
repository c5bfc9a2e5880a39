/* The emulated card's memory: a virtual address range [SPYRE_DEV_BASE, base + capacity) handed
 * out in stick-aligned pieces by first fit over a sorted list of free ranges (coalesced on
 * free), each piece backed by its own zero-filled host buffer, so a 128 GB card costs only what
 * is allocated. Live allocations are kept sorted by address so that spyre_device_ptr(), which
 * every DMA of the executor goes through, is a binary search. Streams and events live in
 * stream.c. */
#include "spyre-emu/device.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/log.h"
#include "device-priv.h"

static int validate_hw(const struct spyre_hw *hw)
{
	if (hw->stick_bytes == 0)
		return err_set(ERR_INVAL, "device: hw '%s' has stick_bytes 0", hw->name);
	if (hw->dev_mem_bytes < hw->stick_bytes)
		return err_set(ERR_INVAL,
			       "device: hw '%s' has dev_mem_bytes %" PRIu64
			       " < stick_bytes %" PRIu32,
			       hw->name, hw->dev_mem_bytes, hw->stick_bytes);
	if (hw->dev_mem_bytes > UINT64_MAX - SPYRE_DEV_BASE)
		return err_set(ERR_INVAL,
			       "device: hw '%s' dev_mem_bytes %" PRIu64
			       " overflows the address space",
			       hw->name, hw->dev_mem_bytes);
	return 0;
}

int spyre_device_create(struct spyre_device **out, const struct spyre_hw *hw)
{
	*out = NULL;
	int rc = validate_hw(hw);
	if (rc)
		return rc;
	struct spyre_device *dev = calloc(1, sizeof(*dev));
	if (!dev)
		return err_set(ERR_NOMEM, "device: out of host memory for the device");
	dev->hw = *hw;
	dev->stick = hw->stick_bytes;
	dev->capacity = hw->dev_mem_bytes / dev->stick * dev->stick;
	dev->free_cap = 16;
	dev->free = malloc(dev->free_cap * sizeof(*dev->free));
	if (!dev->free) {
		free(dev);
		return err_set(ERR_NOMEM, "device: out of host memory for the free list");
	}
	dev->free[0] = (struct dev_range){ SPYRE_DEV_BASE, dev->capacity };
	dev->nfree = 1;
	*out = dev;
	return 0;
}

void spyre_device_destroy(struct spyre_device *dev)
{
	if (!dev)
		return;
	spyre_stream__destroy_all(dev);
	if (dev->nallocs)
		log_debug("device: destroyed with %zu live allocations (%" PRIu64 " bytes)",
			  dev->nallocs, dev->used);
	for (size_t i = 0; i < dev->nallocs; i++)
		free(dev->allocs[i].host);
	free(dev->allocs);
	free(dev->free);
	free(dev->streams);
	free(dev);
}

const struct spyre_hw *spyre_device_hw(const struct spyre_device *dev)
{
	return &dev->hw;
}

uint64_t spyre_device_used(const struct spyre_device *dev)
{
	return dev->used;
}

uint64_t spyre_device_capacity(const struct spyre_device *dev)
{
	return dev->capacity;
}

size_t spyre_device_live_allocations(const struct spyre_device *dev)
{
	return dev->nallocs;
}

/* Grows an array of `*cap` elements of `size` bytes to hold at least `need`. */
static int grow(void **arr, size_t *cap, size_t need, size_t size, const char *what)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	void *p = realloc(*arr, ncap * size);
	if (!p)
		return err_set(ERR_NOMEM, "device: out of host memory growing the %s to %zu", what,
			       ncap);
	*arr = p;
	*cap = ncap;
	return 0;
}

/* Index of the last allocation starting at or before `addr`, or -1 if none. */
static ptrdiff_t alloc_find(const struct spyre_device *dev, uint64_t addr)
{
	size_t lo = 0, hi = dev->nallocs; /* answer is lo - 1 at the end */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (dev->allocs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

static uint64_t largest_free(const struct spyre_device *dev)
{
	uint64_t best = 0;
	for (size_t i = 0; i < dev->nfree; i++)
		if (dev->free[i].len > best)
			best = dev->free[i].len;
	return best;
}

static int out_of_memory(const struct spyre_device *dev, uint64_t bytes, uint64_t rounded)
{
	return err_set(ERR_LIMIT,
		       "device: out of device memory: requested %" PRIu64 " bytes (%" PRIu64
		       " rounded to sticks), %" PRIu64 " of %" PRIu64
		       " bytes in use in %zu allocations, largest free range %" PRIu64 " bytes",
		       bytes, rounded, dev->used, dev->capacity, dev->nallocs, largest_free(dev));
}

/* Takes `len` bytes from the front of free range `i`, returning their address. */
static uint64_t free_take(struct spyre_device *dev, size_t i, uint64_t len)
{
	uint64_t addr = dev->free[i].start;
	dev->free[i].start += len;
	dev->free[i].len -= len;
	if (dev->free[i].len == 0) {
		memmove(&dev->free[i], &dev->free[i + 1],
			(dev->nfree - i - 1) * sizeof(*dev->free));
		dev->nfree--;
	}
	return addr;
}

int spyre_device_alloc(struct spyre_device *dev, uint64_t *addr, uint64_t bytes)
{
	*addr = 0;
	uint64_t want = bytes ? bytes : 1; /* a zero-byte allocation still gets one stick */
	if (want > dev->capacity || want > SIZE_MAX)
		return out_of_memory(dev, bytes, want);
	uint64_t rounded = (want + dev->stick - 1) / dev->stick * dev->stick;
	if (dev->nallocs >= SPYRE_DEV_ALLOCS_MAX)
		return err_set(ERR_LIMIT, "device: %zu live allocations (SPYRE_DEV_ALLOCS_MAX)",
			       dev->nallocs);
	size_t i = 0;
	while (i < dev->nfree && dev->free[i].len < rounded)
		i++;
	if (i == dev->nfree)
		return out_of_memory(dev, bytes, rounded);
	/* Reserve room first so that nothing below can fail half-way; the free list never
	 * holds more than one range per allocation plus one, so free() never grows it. */
	int rc = grow((void **)&dev->allocs, &dev->allocs_cap, dev->nallocs + 1,
		      sizeof(*dev->allocs), "allocation list");
	if (!rc)
		rc = grow((void **)&dev->free, &dev->free_cap, dev->nallocs + 2, sizeof(*dev->free),
			  "free list");
	if (rc)
		return rc;
	unsigned char *host = calloc(1, (size_t)rounded);
	if (!host)
		return err_set(ERR_NOMEM, "device: out of host memory backing %" PRIu64 " bytes",
			       rounded);
	uint64_t a = free_take(dev, i, rounded);
	size_t pos = (size_t)(alloc_find(dev, a) + 1);
	memmove(&dev->allocs[pos + 1], &dev->allocs[pos],
		(dev->nallocs - pos) * sizeof(*dev->allocs));
	dev->allocs[pos] = (struct dev_alloc){ a, rounded, host };
	dev->nallocs++;
	dev->used += rounded;
	*addr = a;
	return 0;
}

/* Returns [start, start + len) to the free list, merging it with its neighbours. */
static void free_insert(struct spyre_device *dev, uint64_t start, uint64_t len)
{
	size_t j = 0; /* first free range after start */
	size_t lo = 0, hi = dev->nfree;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (dev->free[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	j = lo;
	int prev = j > 0 && dev->free[j - 1].start + dev->free[j - 1].len == start;
	int next = j < dev->nfree && start + len == dev->free[j].start;
	if (prev && next) {
		dev->free[j - 1].len += len + dev->free[j].len;
		memmove(&dev->free[j], &dev->free[j + 1],
			(dev->nfree - j - 1) * sizeof(*dev->free));
		dev->nfree--;
	} else if (prev) {
		dev->free[j - 1].len += len;
	} else if (next) {
		dev->free[j].start = start;
		dev->free[j].len += len;
	} else {
		memmove(&dev->free[j + 1], &dev->free[j], (dev->nfree - j) * sizeof(*dev->free));
		dev->free[j] = (struct dev_range){ start, len };
		dev->nfree++;
	}
}

int spyre_device_free(struct spyre_device *dev, uint64_t addr)
{
	ptrdiff_t i = alloc_find(dev, addr);
	if (i < 0 || dev->allocs[i].addr != addr) {
		if (i >= 0 && addr - dev->allocs[i].addr < dev->allocs[i].len)
			return err_set(ERR_NOTFOUND,
				       "device: free of 0x%" PRIx64
				       ", which is inside allocation [0x%" PRIx64 ", +%" PRIu64
				       ") but not its start",
				       addr, dev->allocs[i].addr, dev->allocs[i].len);
		return err_set(ERR_NOTFOUND,
			       "device: free of 0x%" PRIx64
			       ", which is not a live allocation (double free?)",
			       addr);
	}
	struct dev_alloc a = dev->allocs[i];
	size_t n = dev->nallocs - (size_t)i - 1;
	memmove(&dev->allocs[i], &dev->allocs[i + 1], n * sizeof(*dev->allocs));
	dev->nallocs--;
	free_insert(dev, a.addr, a.len);
	free(a.host);
	dev->used -= a.len;
	return 0;
}

void *spyre_device_ptr(struct spyre_device *dev, uint64_t addr, uint64_t len)
{
	ptrdiff_t i = alloc_find(dev, addr);
	if (i < 0 || addr - dev->allocs[i].addr >= dev->allocs[i].len) {
		err_set(ERR_NOTFOUND, "device: address 0x%" PRIx64 " is in no live allocation",
			addr);
		return NULL;
	}
	const struct dev_alloc *a = &dev->allocs[i];
	uint64_t off = addr - a->addr;
	if (len > a->len - off) {
		err_set(ERR_INVAL,
			"device: range [0x%" PRIx64 ", +%" PRIu64
			") crosses the end of allocation [0x%" PRIx64 ", +%" PRIu64 ")",
			addr, len, a->addr, a->len);
		return NULL;
	}
	return a->host + off;
}
