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

#endif
