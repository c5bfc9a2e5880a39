/* The configuration table and its loader. Each key is one row below: its dotted path, type,
 * bounds, default (as YAML text, parsed by the same code as the file), whether SIGHUP reloads it,
 * and one line for the reference page. The loader walks the YAML tree: a mapping whose path is a
 * prefix of some key is a section; a path that is neither a key nor a section is unknown. */
#include "config.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/num.h"
#include "yconf.h"

enum ctype { CT_STR, CT_INT, CT_BOOL, CT_LIST, CT_BYTES, CT_LISTEN };

struct ckey {
	const char *key;
	enum ctype type;
	int64_t min, max; /* numbers: the range; strings: length; lists: item count */
	const char *dflt;
	bool reload;
	size_t off;
	const char *doc;
};

#define O(f) offsetof(struct config, f)
#define S    PATH_TEXT_MAX

static const struct ckey keys[] = {
	{ "listen", CT_LISTEN, 0, 0, "127.0.0.1:8080", false, O(listen),
	  "IPv4 address and port of the HTTP server (port 0: any free port, logged)" },
	{ "http.connections_max", CT_INT, 1, 4096, "256", false, O(http_connections_max),
	  "concurrent HTTP connections; more are refused by the server" },
	{ "state_dir", CT_STR, 1, S, "./spyre-ci-state", false, O(state_dir),
	  "SQLite store, git mirror and reports; created if missing; one daemon at a time "
	  "(`daemon.lock`)" },
	{ "log_level", CT_STR, 1, 16, "info", true, O(log_level),
	  "error, warn, info, debug or trace" },
	{ "upstream.repo", CT_STR, 3, 256, "pytorch/pytorch", true, O(upstream_repo),
	  "owner/name; deliveries about any other repository are ignored" },
	{ "upstream.url", CT_STR, 1, S, "https://github.com/pytorch/pytorch.git", false,
	  O(upstream_url), "what the poller fetches: a URL or a local path" },
	{ "upstream.branches", CT_LIST, 1, 64, "[main]", true, O(branches),
	  "branches whose new tips make jobs (webhook pushes and the poller)" },
	{ "upstream.poll_interval_s", CT_INT, 0, 86400, "60", true, O(poll_interval_s),
	  "seconds between fetches; 0 turns the poller off" },
	{ "upstream.poll_backoff_max_s", CT_INT, 1, 86400, "900", true, O(poll_backoff_max_s),
	  "the longest wait after failed fetches (doubling from the interval)" },
	{ "webhook.secret_file", CT_STR, 1, S, "/etc/spyre-ci/webhook-secret", true,
	  O(webhook_secret_file), "file holding the webhook secret (trailing newline ignored)" },
	{ "webhook.dispatch_repo", CT_STR, 0, 256, "\"\"", true, O(webhook_dispatch_repo),
	  "repository_dispatch accepted only from this owner/name; empty: from any" },
	{ "webhook.refs.tags", CT_BOOL, 0, 0, "false", true, O(accept_tags),
	  "true: pushes of tags make jobs too" },
	{ "webhook.refs.ciflow", CT_BOOL, 0, 0, "false", true, O(accept_ciflow),
	  "true: pushes of ciflow/... tags make jobs (needs tags)" },
	{ "specs", CT_LIST, 1, 256, "[testspecs/specs]", true, O(specs),
	  "test-spec files or directories for the selector's stage 3" },
	{ "selection.budget", CT_STR, 1, 64, "100%", true, O(selection_budget),
	  "stage 4 budget: a count, seconds (\"600s\") or a percentage" },
	{ "selection.shards", CT_INT, 1, 1024, "1", true, O(selection_shards),
	  "shards stage 4 plans" },
	{ "workers.count", CT_INT, 0, 64, "1", false, O(workers),
	  "worker threads claiming jobs; 0: intake only" },
	{ "workers.lease_s", CT_INT, 2, 86400, "300", true, O(lease_s),
	  "a claimed job's lease; renewed while it runs, reclaimed when it expires" },
	{ "workers.max_attempts", CT_INT, 1, 100, "3", true, O(max_attempts),
	  "attempts at one job (claims after an expired lease, retries after a failure that "
	  "may pass) before it is marked failed" },
	{ "executor.jobs", CT_INT, 1, 256, "2", true, O(executor_jobs),
	  "kernel cases run at once (child processes)" },
	{ "executor.timeout_s", CT_INT, 1, 86400, "120", true, O(executor_timeout_s),
	  "wall-clock limit of one kernel case" },
	{ "executor.memory_max", CT_BYTES, 1 << 20, INT64_MAX, "4GiB", true, O(executor_memory_max),
	  "address-space limit of one kernel case" },
	{ "dashboard.crcr_url", CT_STR, 0, S, "\"\"", true, O(crcr_url),
	  "CRCR callback URL; empty: no CRCR messages" },
	{ "dashboard.crcr_token_file", CT_STR, 0, S, "\"\"", true, O(crcr_token_file),
	  "file holding the CRCR bearer token" },
	{ "dashboard.hud_url", CT_STR, 0, S, "\"\"", true, O(hud_url),
	  "HUD upload URL; empty: no HUD messages" },
	{ "dashboard.hud_token_file", CT_STR, 0, S, "\"\"", true, O(hud_token_file),
	  "file holding the HUD token" },
	{ "dashboard.receiver_token_file", CT_STR, 0, S, "\"\"", true, O(receiver_token_file),
	  "token the built-in receiver (POST /api/crcr/results) accepts; empty: receiver off" },
	{ "dashboard.retry_max_s", CT_INT, 1, 86400, "600", true, O(outbox_retry_max_s),
	  "the longest wait between two attempts of one outbox message" },
	{ "retention.jobs_days", CT_INT, 1, 36500, "30", true, O(retention_jobs_days),
	  "finished jobs (with their deliveries, selections, results) and sent outbox messages "
	  "older than this are deleted" },
	{ "retention.reports_days", CT_INT, 1, 36500, "90", true, O(retention_reports_days),
	  "report directories (state_dir/reports/JOB) older than this are deleted" },
};

#define N_KEYS          (sizeof(keys) / sizeof(keys[0]))
#define SECRET_FILE_MAX 4096

static void *field(struct config *c, const struct ckey *k)
{
	return (char *)c + k->off;
}

static const char *type_name(enum ctype t)
{
	static const char *names[] = { "string",          "integer", "boolean",
				       "list of strings", "bytes",   "host:port" };
	return names[t];
}

static int bad(const char *file, const struct yconf_node *n, const char *key, const char *what)
{
	if (!n)
		return err_set(ERR_INVAL, "%s: %s: %s", file, key, what);
	return err_set(ERR_INVAL, "%s:%u:%u: %s: %s", file, n->line, n->col, key, what);
}

static bool is_null(const struct yconf_node *n)
{
	return n->kind == YCONF_SCALAR && n->plain &&
	       (n->len == 0 || !strcmp(n->text, "~") || !strcmp(n->text, "null"));
}

static int set_listen(struct config *c, const char *text)
{
	const char *colon = strrchr(text, ':');
	if (!colon || colon == text || (size_t)(colon - text) >= sizeof(c->listen_host))
		return err_set(ERR_INVAL, "expected IPV4:PORT, got \"%s\"", text);
	char host[sizeof(c->listen_host)];
	memcpy(host, text, (size_t)(colon - text));
	host[colon - text] = 0;
	struct in_addr a;
	if (inet_pton(AF_INET, host, &a) != 1)
		return err_set(ERR_INVAL, "\"%s\" is not an IPv4 address", host);
	int port;
	if (num_parse_int(&port, colon + 1, 0, 65535) < 0)
		return err_prefix("port");
	memcpy(c->listen_host, host, sizeof(host));
	c->listen_port = port;
	return 0;
}

static int set_string(char **dst, const char *text)
{
	char *s = strdup(text);
	if (!s)
		return err_set(ERR_NOMEM, "out of memory");
	free(*dst);
	*dst = s;
	return 0;
}

static void list_clear(struct config_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static int set_list(struct config_list *l, const struct yconf_node *n, const struct ckey *k,
		    const char *file)
{
	if (n->kind != YCONF_SEQ)
		return bad(file, n, k->key, "expected a list of strings");
	if ((int64_t)n->n < k->min || (int64_t)n->n > k->max)
		return bad(file, n, k->key, "wrong number of items");
	char **v = calloc(n->n, sizeof(*v));
	if (!v)
		return err_set(ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n->n; i++) {
		const struct yconf_node *it = n->kids[i];
		if (it->kind != YCONF_SCALAR || it->len == 0 || it->len > PATH_TEXT_MAX ||
		    !(v[i] = strdup(it->text))) {
			for (size_t j = 0; j < i; j++)
				free(v[j]);
			free(v);
			return bad(file, it, k->key, "expected a non-empty string item");
		}
	}
	list_clear(l);
	l->v = v;
	l->n = n->n;
	return 0;
}

/* Sets one key from a node (a scalar or, for lists, a sequence). */
static int set_value(struct config *c, const struct ckey *k, const struct yconf_node *n,
		     const char *file)
{
	void *f = field(c, k);
	if (k->type == CT_LIST)
		return set_list(f, n, k, file);
	if (n->kind != YCONF_SCALAR)
		return bad(file, n, k->key, type_name(k->type));
	const char *t = is_null(n) ? "" : n->text;
	size_t len = is_null(n) ? 0 : n->len;
	int rc = 0;
	switch (k->type) {
	case CT_STR:
		if ((int64_t)len < k->min || (int64_t)len > k->max)
			return bad(file, n, k->key, k->min ? "empty or too long" : "too long");
		return set_string(f, t);
	case CT_INT: {
		int64_t v;
		if (!n->plain || num_parse_i64(&v, t, k->min, k->max) < 0)
			return err_set(
			    ERR_INVAL, "%s:%u:%u: %s: expected an integer in [%lld, %lld]", file,
			    n->line, n->col, k->key, (long long)k->min, (long long)k->max);
		*(int *)f = (int)v;
		return 0;
	}
	case CT_BOOL:
		if (n->plain && !strcmp(t, "true"))
			*(bool *)f = true;
		else if (n->plain && !strcmp(t, "false"))
			*(bool *)f = false;
		else
			return bad(file, n, k->key, "expected true or false");
		return 0;
	case CT_BYTES: {
		uint64_t v;
		if (num_parse_bytes(&v, t, (uint64_t)k->max) < 0 || v < (uint64_t)k->min)
			return bad(file, n, k->key,
				   "expected a byte count (\"4GiB\"), at least 1MiB");
		*(uint64_t *)f = v;
		return 0;
	}
	case CT_LISTEN:
		if ((rc = set_listen(c, t)) < 0) {
			char what[256];
			snprintf(what, sizeof(what), "%s", err_last());
			return bad(file, n, k->key, what);
		}
		return set_string(f, t);
	default:
		return bad(file, n, k->key, "unsupported type");
	}
}

static const struct ckey *find_key(const char *path)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (!strcmp(keys[i].key, path))
			return &keys[i];
	return NULL;
}

static bool is_section(const char *path)
{
	size_t len = strlen(path);
	for (size_t i = 0; i < N_KEYS; i++)
		if (!strncmp(keys[i].key, path, len) && keys[i].key[len] == '.')
			return true;
	return false;
}

static int walk_map(struct config *c, const struct yconf_node *map, const char *prefix,
		    const char *file)
{
	if (map->kind != YCONF_MAP)
		return bad(file, map, *prefix ? prefix : "(top)", "expected a mapping");
	for (size_t i = 0; i + 1 < map->n; i += 2) {
		const struct yconf_node *kn = map->kids[i], *vn = map->kids[i + 1];
		if (kn->kind != YCONF_SCALAR)
			return bad(file, kn, prefix, "a key must be a plain string");
		for (size_t j = 0; j < i; j += 2)
			if (!strcmp(map->kids[j]->text, kn->text))
				return bad(file, kn, kn->text, "duplicate key");
		char path[256];
		int w =
		    snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", kn->text);
		if (w < 0 || (size_t)w >= sizeof(path))
			return bad(file, kn, prefix, "key too long");
		const struct ckey *k = find_key(path);
		int rc;
		if (k)
			rc = set_value(c, k, vn, file);
		else if (is_section(path))
			rc = walk_map(c, vn, path, file);
		else
			rc = bad(file, kn, path, "unknown key");
		if (rc < 0)
			return rc;
	}
	return 0;
}

int config_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < N_KEYS; i++) {
		struct yconf_node *n;
		int rc = yconf_parse(&n, "(default)", keys[i].dflt, strlen(keys[i].dflt));
		if (rc == 0)
			rc = n ? set_value(c, &keys[i], n, "(default)") : ERR_INVAL;
		yconf_free(n);
		if (rc < 0) {
			config_finish(c);
			return rc;
		}
	}
	return 0;
}

static int check_whole(const struct config *c, const char *file)
{
	enum log_level lvl;
	if (log_level_parse(&lvl, c->log_level) < 0)
		return err_set(ERR_INVAL, "%s: log_level: unknown level \"%s\"", file,
			       c->log_level);
	if (!strchr(c->upstream_repo, '/'))
		return err_set(ERR_INVAL, "%s: upstream.repo: expected owner/name", file);
	if (c->accept_ciflow && !c->accept_tags)
		return err_set(ERR_INVAL, "%s: webhook.refs.ciflow: needs webhook.refs.tags", file);
	return 0;
}

int config_parse(struct config *c, const char *file, const char *text, size_t len)
{
	int rc = config_defaults(c);
	if (rc < 0)
		return rc;
	struct yconf_node *root;
	if ((rc = yconf_parse(&root, file, text, len)) < 0)
		goto out;
	if (root && !is_null(root))
		rc = walk_map(c, root, "", file);
	yconf_free(root);
	if (rc == 0)
		rc = check_whole(c, file);
	if (rc == 0)
		rc = set_string(&c->path, file);
out:
	if (rc < 0)
		config_finish(c);
	return rc;
}

static int read_secret(struct config *c)
{
	char *data;
	size_t len;
	if (fs_read_file(&data, &len, c->webhook_secret_file, SECRET_FILE_MAX) < 0)
		return err_prefix("%s: webhook.secret_file", c->path);
	while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r' || data[len - 1] == ' '))
		data[--len] = 0;
	if (len == 0) {
		free(data);
		return err_set(ERR_INVAL, "%s: webhook.secret_file: %s is empty", c->path,
			       c->webhook_secret_file);
	}
	c->secret = data;
	c->secret_len = len;
	return 0;
}

int config_load(struct config *c, const char *path)
{
	char *text;
	size_t len;
	int rc = fs_read_file(&text, &len, path, YAML_DOC_MAX);
	if (rc < 0) {
		memset(c, 0, sizeof(*c));
		return rc;
	}
	rc = config_parse(c, path, text, len);
	free(text);
	if (rc == 0 && (rc = read_secret(c)) < 0)
		config_finish(c);
	return rc;
}

void config_finish(struct config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < N_KEYS; i++) {
		void *f = field(c, &keys[i]);
		if (keys[i].type == CT_STR || keys[i].type == CT_LISTEN)
			free(*(char **)f);
		else if (keys[i].type == CT_LIST)
			list_clear(f);
	}
	if (c->secret)
		memset(c->secret, 0, c->secret_len);
	free(c->secret);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

static bool same(const struct config *a, const struct config *b, const struct ckey *k)
{
	const void *fa = (const char *)a + k->off, *fb = (const char *)b + k->off;
	switch (k->type) {
	case CT_STR:
	case CT_LISTEN:
		return !strcmp(*(char *const *)fa, *(char *const *)fb);
	case CT_INT:
		return *(const int *)fa == *(const int *)fb;
	case CT_BOOL:
		return *(const bool *)fa == *(const bool *)fb;
	case CT_BYTES:
		return *(const uint64_t *)fa == *(const uint64_t *)fb;
	default:
		break;
	}
	const struct config_list *la = fa, *lb = fb;
	if (la->n != lb->n)
		return false;
	for (size_t i = 0; i < la->n; i++)
		if (strcmp(la->v[i], lb->v[i]))
			return false;
	return true;
}

/* Only scalar keys are fixed (no list is), so swapping a field is a copy of the old value. */
int config_keep_fixed(struct config *next, const struct config *cur)
{
	int kept = 0;
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct ckey *k = &keys[i];
		if (k->reload || same(next, cur, k))
			continue;
		log_warn("config key %s changed: it needs a restart, keeping the running value",
			 k->key);
		void *f = field(next, k);
		const void *g = (const char *)cur + k->off;
		if (k->type == CT_STR || k->type == CT_LISTEN)
			set_string(f, *(char *const *)g);
		else if (k->type == CT_INT)
			*(int *)f = *(const int *)g;
		if (k->type == CT_LISTEN) {
			memcpy(next->listen_host, cur->listen_host, sizeof(next->listen_host));
			next->listen_port = cur->listen_port;
		}
		kept++;
	}
	return kept;
}

void config_write_reference(FILE *out)
{
	fprintf(out, "| key | type | default | SIGHUP | meaning |\n|---|---|---|---|---|\n");
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct ckey *k = &keys[i];
		char range[64] = "";
		if (k->type == CT_INT)
			snprintf(range, sizeof(range), " [%lld, %lld]", (long long)k->min,
				 (long long)k->max);
		fprintf(out, "| `%s` | %s%s | `%s` | %s | %s |\n", k->key, type_name(k->type),
			range, k->dflt, k->reload ? "reloads" : "restart", k->doc);
	}
}
