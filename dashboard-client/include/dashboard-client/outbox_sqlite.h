/* The SQLite outbox: outbox.h's interface on one table, `outbox`, in either of two places.
 *  - dc_outbox_sqlite_open(): a file of the outbox's own (`spyre-ci report`, `spyre-ci run
 *    --post`), with its own connection; the file's layout is versioned by PRAGMA user_version
 *    and an older file is migrated when opened.
 *  - dc_outbox_sqlite_attach(): a connection somebody else owns and whose schema already holds
 *    the table (the daemon's store, whose migrations make it), so that the messages share the
 *    owner's file and backups. The outbox never closes that connection and never changes its
 *    schema; it runs its own transactions on it, so it is used by the thread that uses the
 *    connection, between the owner's transactions, and destroyed before the owner closes it.
 * Either way every call is one transaction and every statement is prepared once, with bound
 * parameters, in SQL that PostgreSQL accepts too. */
#ifndef DASHBOARD_CLIENT_OUTBOX_SQLITE_H
#define DASHBOARD_CLIENT_OUTBOX_SQLITE_H

#include "dashboard-client/outbox.h"

struct sqlite3;

/* Opens (creating or migrating) the outbox file at `path`: WAL journal, synchronous=FULL, a
 * busy timeout. A file whose layout is newer than this program's is refused untouched
 * (ERR_BADSTATE). */
int dc_outbox_sqlite_open(struct dc_outbox **out, const char *path);

/* The outbox on `db`, borrowed: the caller keeps it open until the outbox is destroyed, and
 * closes it. The database must hold the outbox table (ERR_BADSTATE when its layout does not
 * fit the statements). */
int dc_outbox_sqlite_attach(struct dc_outbox **out, struct sqlite3 *db);

#endif
