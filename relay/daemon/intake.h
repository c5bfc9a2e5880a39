/* Group commit of webhook deliveries. HTTP threads hand their item to intake_submit(), which
 * blocks until the one writer thread has committed it: the writer takes every item waiting
 * (up to INTAKE_BATCH_MAX) and commits them in one transaction, so a burst costs one fsync
 * instead of one each, and no delivery is answered before its commit is durable. */
#ifndef RELAY_DAEMON_INTAKE_H
#define RELAY_DAEMON_INTAKE_H

#include "metrics.h"
#include "store.h"

#define INTAKE_BATCH_MAX 256

struct intake;

/* Takes ownership of `store` (the writer's own handle). */
int intake_create(struct intake **out, struct store *store, struct metrics *m);
/* Commits `it` (its job_id and duplicate filled in); 0, or the store's error, `it` then
 * untouched. A batch the store refuses is committed again delivery by delivery, so a delivery
 * fails only for a fault of its own or of the store, never for its neighbours'. */
int intake_submit(struct intake *in, struct intake_item *it);
/* How many submitted deliveries wait for the writer to take them (not those of the batch being
 * committed): read-only, so that a test can tell when a group has formed. */
size_t intake_queued(struct intake *in);
/* Commits what is queued, stops the writer, closes the store. NULL is a no-op. */
void intake_destroy(struct intake *in);

#endif
