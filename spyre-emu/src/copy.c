/* Host <-> device copies of the emulated card: a host tensor (host dtype, any strides) is
 * stickified into device memory in a layout (float16 becoming DL16), and unstickified back.
 * With a stream the copy is a task on it (it keeps its own copy of the layout and strides, but
 * the host memory must stay valid until it runs); without one it runs at once. */
#include <inttypes.h>
#include <stdlib.h>

#include "common/err.h"
#include "device-priv.h"

struct copy {
	struct spyre_layout l;
	int64_t strides[SPYRE_DIMS_MAX];
	uint64_t addr;
	const void *src; /* to device */
	void *dst;       /* to host */
};

static int copy_run(struct spyre_device *dev, void *ctx)
{
	struct copy *c = ctx;
	uint64_t bytes = spyre_layout_bytes(&c->l);
	void *p = spyre_device_ptr(dev, c->addr, bytes);
	if (!p)
		return err_prefix("copy %s device", c->src ? "to" : "from");
	int rc = c->src ? spyre_layout_stickify(&c->l, c->src, c->strides, p)
			: spyre_layout_unstickify(&c->l, p, c->dst, c->strides);
	if (rc)
		return err_prefix("copy %s device 0x%" PRIx64, c->src ? "to" : "from", c->addr);
	return 0;
}

static int copy_submit(struct spyre_device *dev, struct spyre_stream *s, struct copy *c,
		       const int64_t *host_strides)
{
	int nd = c->l.host_ndim;
	if (nd < 0 || nd > SPYRE_DIMS_MAX)
		return err_set(ERR_INVAL, "copy: layout has %d host dimensions (max %d)", nd,
			       SPYRE_DIMS_MAX);
	if (host_strides)
		for (int i = 0; i < nd; i++)
			c->strides[i] = host_strides[i];
	else
		spyre_layout_contiguous_strides(c->strides, c->l.host_size, nd);
	/* Refuse a bad range now rather than when the stream runs. */
	if (!spyre_device_ptr(dev, c->addr, spyre_layout_bytes(&c->l)))
		return err_prefix("copy %s device", c->src ? "to" : "from");
	if (!s)
		return copy_run(dev, c);
	struct copy *q = malloc(sizeof(*q));
	if (!q)
		return err_set(ERR_NOMEM, "copy: out of host memory queuing a copy");
	*q = *c;
	return spyre_stream__enqueue_owned(s, copy_run, q, free);
}

int spyre_copy_to_device(struct spyre_device *dev, struct spyre_stream *s, uint64_t addr,
			 const struct spyre_layout *l, const void *host,
			 const int64_t *host_strides)
{
	if (!l || !host)
		return err_set(ERR_INVAL, "copy to device: NULL layout or host pointer");
	struct copy c = { .l = *l, .addr = addr, .src = host };
	return copy_submit(dev, s, &c, host_strides);
}

int spyre_copy_to_host(struct spyre_device *dev, struct spyre_stream *s, void *host,
		       const int64_t *host_strides, uint64_t addr, const struct spyre_layout *l)
{
	if (!l || !host)
		return err_set(ERR_INVAL, "copy to host: NULL layout or host pointer");
	struct copy c = { .l = *l, .addr = addr, .dst = host };
	return copy_submit(dev, s, &c, host_strides);
}
