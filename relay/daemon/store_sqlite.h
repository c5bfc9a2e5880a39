/* Private to the SQLite store: the handle, its prepared statements, and the helpers that
 * store_sqlite.c and store_migrate.c share. */
#ifndef RELAY_DAEMON_STORE_SQLITE_H
#define RELAY_DAEMON_STORE_SQLITE_H

#include <sqlite3.h>

#include "store.h"

enum st_id {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_DELIVERY_FIND,
	ST_DELIVERY_ADD,
	ST_JOB_BY_TIP,
	ST_JOB_ADD,
	ST_CURSOR_GET,
	ST_CURSOR_DEL,
	ST_CURSOR_ADD,
	ST_CLAIMABLE,
	ST_CLAIM,
	ST_RENEW,
	ST_RELEASE,
	ST_END_LEASE,
	ST_SELECTION_DEL,
	ST_SELECTION_ADD,
	ST_SELECTION_GET,
	ST_JOB_GET,
	ST_JOB_LIST,
	ST_JOB_COUNTS,
	ST_DELIVERY_COUNT,
	ST_OUTBOX_DEPTH,
	ST_PING,
	ST_HELD,
	ST_JOB_DISPATCH,
	ST_JOB_SET_DISPATCH,
	ST_RESULTS_DEL,
	ST_RESULT_ADD,
	ST_RESULTS_COUNT,
	ST_RET_DELIVERIES,
	ST_RET_SELECTIONS,
	ST_RET_RESULTS,
	ST_RET_JOBS,
	ST_RET_OUTBOX,
	/* the outbox's statements, whose text is in store_sqlite_outbox.c */
	ST_OB_INSERT,
	ST_OB_ORPHAN,
	ST_OB_CLAIM,
	ST_OB_ATTEMPT,
	ST_OB_DELIVERED,
	ST_OB_RETRY,
	ST_OB_DEAD,
	ST_OB_CASCADE,
	ST_OB_NEXT_DUE,
	ST_OB_FIRST,
	ST_OB_COUNTS,
	ST_OB_DEAD_LIST,
	ST_OB_REQUEUE,
	ST_COUNT,
};

struct store_sqlite {
	struct store base;
	sqlite3 *db;
	sqlite3_stmt *st[ST_COUNT];
};

extern const struct store_ops store__sqlite_ops;

int store__fail(struct store_sqlite *s, const char *what);
sqlite3_stmt *store__stmt(struct store_sqlite *s, enum st_id id);
int store__begin(struct store_sqlite *s);
int store__commit(struct store_sqlite *s);
int store__rollback(struct store_sqlite *s, int rc);

/* store_sqlite_outbox.c: the outbox operations of store_ops, and their statements' text
 * (indexed from ST_OB_INSERT). */
#define STORE__OB_FIRST ST_OB_INSERT
extern const char *const store__outbox_sql[ST_COUNT - ST_OB_INSERT];
int store__outbox_enqueue(struct store *base, const char *target, const struct dc_message *m,
			  size_t n, size_t *added, int64_t now_ms);
int store__outbox_claim(struct store *base, const char *target, int64_t now_ms, size_t max,
			struct dc_message *out, size_t *n);
int store__outbox_settle(struct store *base, const char *target, const struct dc_settlement *x,
			 size_t n);
int store__outbox_next_due(struct store *base, const char *target, int64_t *out_ms);
int store__outbox_first_attempt(struct store *base, const char *target, const char *key,
				int64_t *out_ms);
int store__outbox_counts(struct store *base, const char *target, struct dc_outbox_counts *out);
int store__outbox_each_dead(struct store *base, const char *target,
			    void (*fn)(const struct dc_dead_letter *d, void *ctx), void *ctx);
int store__outbox_requeue(struct store *base, const char *target, uint64_t *n);

#endif
