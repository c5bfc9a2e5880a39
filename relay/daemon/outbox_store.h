/* dashboard-client's outbox interface (struct dc_outbox_ops) on top of the daemon's store, so
 * that dc_drain() sends from the store's outbox unchanged and every read and write of the
 * outbox goes through store.h (a PostgreSQL store carries it too). */
#ifndef RELAY_DAEMON_OUTBOX_STORE_H
#define RELAY_DAEMON_OUTBOX_STORE_H

#include <stdbool.h>

#include "dashboard-client/outbox.h"
#include "store.h"

/* Wraps `s`; with `owns`, destroying the outbox closes the store too. The outbox is used by
 * one thread at a time, as the store handle is. */
int outbox_store_open(struct dc_outbox **out, struct store *s, bool owns);

#endif
