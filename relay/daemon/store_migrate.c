/* Opening the SQLite store and its schema migrations. The schema version lives in a table of
 * its own (portable, unlike PRAGMA user_version). Each step runs in one transaction with the
 * version bump, so a crash mid-migration leaves the previous version intact. A database whose
 * version is newer than this program's is refused untouched: an older daemon must not write a
 * newer layout it does not know. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"
#include "common/limits.h"
#include "common/log.h"
#include "store_sqlite.h"

static const char *const migrations[STORE_SCHEMA_VERSION] = {
	/* 1: the queue, its deliveries, what workers write, the poller's cursors */
	"CREATE TABLE schema_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);"
	"INSERT INTO schema_meta (name, value) VALUES ('version', 0);"
	"CREATE TABLE jobs (id INTEGER PRIMARY KEY, event TEXT NOT NULL, ref TEXT, base TEXT,"
	" head TEXT NOT NULL, tip_key TEXT NOT NULL UNIQUE, pr_number INTEGER NOT NULL DEFAULT 0,"
	" state INTEGER NOT NULL, lease_owner TEXT, lease_expires_ms INTEGER NOT NULL DEFAULT 0,"
	" attempts INTEGER NOT NULL DEFAULT 0, created_ms INTEGER NOT NULL,"
	" updated_ms INTEGER NOT NULL);"
	"CREATE TABLE deliveries (delivery_id TEXT PRIMARY KEY, event TEXT NOT NULL,"
	" job_id INTEGER, received_ms INTEGER NOT NULL);"
	"CREATE TABLE selections (job_id INTEGER PRIMARY KEY, report TEXT NOT NULL,"
	" scheduled INTEGER NOT NULL, created_ms INTEGER NOT NULL);"
	"CREATE TABLE results (job_id INTEGER NOT NULL, case_id TEXT NOT NULL,"
	" outcome TEXT NOT NULL, detail TEXT, PRIMARY KEY (job_id, case_id));"
	"CREATE TABLE outbox (id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL,"
	" target TEXT NOT NULL, idem_key TEXT NOT NULL UNIQUE, body TEXT NOT NULL,"
	" state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,"
	" next_attempt_ms INTEGER NOT NULL);"
	"CREATE TABLE cursors (ref TEXT PRIMARY KEY, tip TEXT NOT NULL,"
	" updated_ms INTEGER NOT NULL);",
	/* 2: a job's last word (why it failed, what it waits for), and the claim's index */
	"ALTER TABLE jobs ADD COLUMN detail TEXT;"
	"CREATE INDEX jobs_state ON jobs (state, id);",
	/* 3: the dashboard outbox, the table of dashboard-client's SQLite outbox (outbox_sqlite.c,
	 * attached to the store's connection), stamped for retention; results get a time too.
	 * The version-1 outbox table was never written. */
	"DROP TABLE outbox;"
	"CREATE TABLE outbox (id INTEGER PRIMARY KEY, key TEXT NOT NULL, target TEXT NOT NULL,"
	" job_key TEXT NOT NULL, seq INTEGER NOT NULL, format TEXT NOT NULL, body BLOB NOT NULL,"
	" state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending','delivered','dead')),"
	" attempts INTEGER NOT NULL DEFAULT 0, first_attempt_ms INTEGER,"
	" next_at_ms INTEGER NOT NULL DEFAULT 0, last_status INTEGER NOT NULL DEFAULT 0,"
	" last_error TEXT, dead_body BLOB, already INTEGER NOT NULL DEFAULT 0,"
	" created_ms INTEGER NOT NULL DEFAULT (CAST(strftime('%s','now') AS INTEGER) * 1000),"
	" UNIQUE (target, key));"
	"CREATE INDEX outbox_due ON outbox (target, state, next_at_ms);"
	"CREATE INDEX outbox_job ON outbox (target, job_key, seq);"
	"ALTER TABLE results ADD COLUMN created_ms INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE jobs ADD COLUMN dispatch TEXT;"
	"CREATE INDEX jobs_updated ON jobs (state, updated_ms);",
	/* 4: what the built-in dashboard's receiver accepted (HUD envelopes, one row a message) */
	"CREATE TABLE hud_messages (id INTEGER PRIMARY KEY, idem_key TEXT NOT NULL UNIQUE,"
	" record_key TEXT NOT NULL, status TEXT NOT NULL, conclusion TEXT, delivery_id TEXT,"
	" run_id TEXT, job_name TEXT, workflow TEXT, head_sha TEXT, passed INTEGER,"
	" failed INTEGER, skipped INTEGER, queue_time REAL, execution_time REAL,"
	" failed_tests TEXT, received_ms INTEGER NOT NULL, UNIQUE (record_key, status));"
	"CREATE INDEX hud_messages_head ON hud_messages (head_sha, id);",
	/* 5: when a worker last claimed the job, so queue time and run time come from the store */
	"ALTER TABLE jobs ADD COLUMN started_ms INTEGER;",
};

static int schema_version(struct store_sqlite *s, int *out)
{
	sqlite3_stmt *st;
	*out = 0;
	if (sqlite3_prepare_v2(s->db,
			       "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND "
			       "name = 'schema_meta'",
			       -1, &st, NULL) != SQLITE_OK)
		return store__fail(s, "schema");
	int rc = sqlite3_step(st);
	int have = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
	sqlite3_finalize(st);
	if (have < 0)
		return store__fail(s, "schema");
	if (have == 0)
		return 0;
	if (sqlite3_prepare_v2(s->db, "SELECT value FROM schema_meta WHERE name = 'version'", -1,
			       &st, NULL) != SQLITE_OK)
		return store__fail(s, "schema version");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : err_set(ERR_BADSTATE, "store: schema_meta has no version");
}

static int migrate_step(struct store_sqlite *s, int to)
{
	char bump[96];
	snprintf(bump, sizeof(bump), "UPDATE schema_meta SET value = %d WHERE name = 'version';",
		 to);
	int rc = store__begin(s);
	if (rc == 0 && sqlite3_exec(s->db, migrations[to - 1], NULL, NULL, NULL) != SQLITE_OK)
		rc = store__fail(s, "migration");
	/* bump is built from an int we own, not from input */
	if (rc == 0 && sqlite3_exec(s->db, bump, NULL, NULL, NULL) != SQLITE_OK)
		rc = store__fail(s, "migration version");
	if (rc == 0)
		rc = store__commit(s);
	rc = store__rollback(s, rc);
	if (rc == 0)
		log_info("store: schema migrated to version %d", to);
	return rc;
}

static int pragmas(struct store_sqlite *s)
{
	static const char *const p[] = {
		"PRAGMA busy_timeout = 10000",
		"PRAGMA journal_mode = WAL",
		"PRAGMA synchronous = FULL",
	};
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		if (sqlite3_exec(s->db, p[i], NULL, NULL, NULL) != SQLITE_OK)
			return store__fail(s, p[i]);
	return 0;
}

int store_sqlite_open_at(struct store **out, const char *dir, int version)
{
	*out = NULL;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return err_set_errno(ERR_IO, "store: cannot create %s", dir);
	char path[PATH_TEXT_MAX];
	if (snprintf(path, sizeof(path), "%s/spyre-ci.db", dir) >= (int)sizeof(path))
		return err_set(ERR_LIMIT, "store: path longer than PATH_TEXT_MAX");
	struct store_sqlite *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(ERR_NOMEM, "out of memory");
	s->base.ops = &store__sqlite_ops;
	int rc = 0;
	if (sqlite3_open_v2(path, &s->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK)
		rc = err_set(ERR_IO, "store: cannot open %s: %s", path,
			     s->db ? sqlite3_errmsg(s->db) : "out of memory");
	int have = 0;
	if (rc == 0)
		rc = pragmas(s);
	if (rc == 0)
		rc = schema_version(s, &have);
	if (rc == 0 && have > STORE_SCHEMA_VERSION)
		rc = err_set(ERR_BADSTATE,
			     "store: %s has schema version %d, newer than this program's %d: "
			     "refusing to touch it",
			     path, have, STORE_SCHEMA_VERSION);
	for (int v = have + 1; rc == 0 && v <= version && v <= STORE_SCHEMA_VERSION; v++)
		rc = migrate_step(s, v);
	if (rc < 0) {
		s->base.ops->close(&s->base);
		return rc;
	}
	*out = &s->base;
	return 0;
}

int store_sqlite_open(struct store **out, const char *dir)
{
	return store_sqlite_open_at(out, dir, STORE_SCHEMA_VERSION);
}
