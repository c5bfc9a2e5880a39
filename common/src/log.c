/* The logger: level check in the macro, formatting here, one write() per line so that lines
 * from several threads never interleave. See log.h. */
#include "common/log.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/limits.h"

/* Set once at start-up, read by every log macro; not meant to change while threads run. */
enum log_level log__level = LOG_INFO;
static enum log_format log_format = LOG_FORMAT_LOGFMT;
static log_sink_fn log_sink;
static void *log_sink_ctx;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const level_names[] = { "silent", "error", "warn", "info", "debug", "trace" };

void log_set_level(enum log_level level)
{
	log__level = level;
}

enum log_level log_get_level(void)
{
	return log__level;
}

void log_set_format(enum log_format format)
{
	log_format = format;
}

void log_set_sink(log_sink_fn sink, void *ctx)
{
	pthread_mutex_lock(&log_lock);
	log_sink = sink;
	log_sink_ctx = ctx;
	pthread_mutex_unlock(&log_lock);
}

const char *log_level_name(enum log_level level)
{
	if ((int)level < 0 || level > LOG_TRACE)
		return "?";
	return level_names[level];
}

int log_level_parse(enum log_level *out, const char *name)
{
	for (int i = 0; i <= LOG_TRACE; i++) {
		if (strcmp(name, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	if (strcmp(name, "warning") == 0) {
		*out = LOG_WARN;
		return 0;
	}
	return err_set(
	    ERR_INVAL,
	    "unknown log level '%.32s' (expected error, warn, info, debug, trace or silent)", name);
}

/* ---- redaction ---- */

static const char *const secret_keys[] = { "token",  "secret",  "password",      "passwd",
					   "apikey", "api_key", "authorization", "credential" };

static int is_value_char(char c)
{
	return c && !isspace((unsigned char)c) && c != '"' && c != '\'' && c != ',' && c != '&' &&
	       c != '}' && c != ';';
}

static int is_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* If a key ending at `key_end` (exclusive) names a secret, returns 1. */
static int key_is_secret(const char *start, const char *key_end)
{
	const char *k = key_end;
	while (k > start && is_word_char(k[-1]))
		k--;
	size_t klen = (size_t)(key_end - k);
	for (size_t i = 0; i < sizeof(secret_keys) / sizeof(secret_keys[0]); i++) {
		size_t sl = strlen(secret_keys[i]);
		for (size_t off = 0; off + sl <= klen; off++)
			if (strncasecmp(k + off, secret_keys[i], sl) == 0)
				return 1;
	}
	return 0;
}

/* How many bytes at `p` form a secret that must go, or 0. `start` is the start of the text. */
static size_t secret_at(const char *start, const char *p, size_t *keep)
{
	*keep = 0;
	static const char *const token_prefixes[] = { "ghp_", "gho_", "ghu_",
						      "ghs_", "ghr_", "github_pat_" };
	if (p == start || !is_word_char(p[-1])) {
		for (size_t i = 0; i < sizeof(token_prefixes) / sizeof(token_prefixes[0]); i++) {
			size_t pl = strlen(token_prefixes[i]);
			if (strncmp(p, token_prefixes[i], pl) == 0) {
				size_t n = pl;
				while (isalnum((unsigned char)p[n]) || p[n] == '_')
					n++;
				if (n >= pl + 16)
					return n;
			}
		}
	}
	if (strncasecmp(p, "bearer ", 7) == 0 || strncasecmp(p, "basic ", 6) == 0) {
		size_t pre = p[1] == 'e' || p[1] == 'E' ? 7 : 6;
		size_t n = pre;
		while (is_value_char(p[n]))
			n++;
		if (n > pre) {
			*keep = pre;
			return n;
		}
	}
	if (strncmp(p, "sha256=", 7) == 0) {
		size_t n = 7;
		while (isxdigit((unsigned char)p[n]))
			n++;
		if (n >= 7 + 16) {
			*keep = 7;
			return n;
		}
	}
	/* key=value, key: value, "key":"value" */
	if ((*p == '=' || *p == ':') && p > start) {
		const char *key_end = p;
		if (key_end[-1] == '"' && key_end - 1 > start)
			key_end--;
		if (key_is_secret(start, key_end)) {
			size_t n = 1;
			while (p[n] == ' ' || p[n] == '"')
				n++;
			if (strncasecmp(p + n, "bearer ", 7) == 0)
				n += 7;
			else if (strncasecmp(p + n, "basic ", 6) == 0)
				n += 6;
			size_t v = n;
			while (is_value_char(p[v]))
				v++;
			if (v > n && strncasecmp(p + n, "[redacted]", 10) != 0) {
				*keep = n;
				return v;
			}
		}
	}
	return 0;
}

void log_redact(char *out, size_t size, const char *in)
{
	static const char mark[] = "[redacted]";
	size_t o = 0;
	if (size == 0)
		return;
	for (const char *p = in; *p;) {
		size_t keep;
		size_t n = secret_at(in, p, &keep);
		if (n) {
			for (size_t i = 0; i < keep && o + 1 < size; i++)
				out[o++] = p[i];
			for (size_t i = 0; mark[i] && o + 1 < size; i++)
				out[o++] = mark[i];
			p += n;
			continue;
		}
		if (o + 1 < size)
			out[o++] = *p;
		p++;
	}
	out[o] = '\0';
}

/* ---- formatting ---- */

static size_t put(char *dst, size_t at, size_t size, const char *s)
{
	while (*s && at + 1 < size)
		dst[at++] = *s++;
	return at;
}

/* Quotes `s` as a logfmt value (always quoted) or a JSON string. */
static size_t put_quoted(char *dst, size_t at, size_t size, const char *s)
{
	at = put(dst, at, size, "\"");
	for (; *s && at + 8 < size; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			dst[at++] = '\\';
			dst[at++] = (char)c;
		} else if (c == '\n') {
			at = put(dst, at, size, "\\n");
		} else if (c == '\t') {
			at = put(dst, at, size, "\\t");
		} else if (c < 0x20 || c == 0x7f) {
			at += (size_t)snprintf(dst + at, size - at, "\\u%04x", c);
		} else {
			dst[at++] = (char)c;
		}
	}
	return put(dst, at, size, "\"");
}

static void emit(const char *line, size_t len)
{
	pthread_mutex_lock(&log_lock);
	if (log_sink) {
		log_sink(line, len, log_sink_ctx);
	} else {
		while (len) {
			ssize_t w = write(STDERR_FILENO, line, len);
			if (w <= 0)
				break;
			line += w;
			len -= (size_t)w;
		}
	}
	pthread_mutex_unlock(&log_lock);
}

void log__write(enum log_level level, const char *file, int line, const char *fmt, ...)
{
	char raw[LOG_LINE_MAX];
	char msg[LOG_LINE_MAX + 64];
	char out[2 * LOG_LINE_MAX + 256];
	char ts[CLOCK_ISO8601_LEN + 1];
	char src[512];

	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	if (n < 0)
		snprintf(raw, sizeof(raw), "(bad log format)");
	else if ((size_t)n >= sizeof(raw))
		memcpy(raw + sizeof(raw) - 4, "...", 4);
	log_redact(msg, sizeof(msg), raw);

	if (clock_format_iso8601(ts, sizeof(ts), clock_wall_ms(), 1) != 0)
		ts[0] = '\0';
	snprintf(src, sizeof(src), "%s:%d", file, line);

	size_t at = 0;
	if (log_format == LOG_FORMAT_JSON) {
		at = put(out, at, sizeof(out), "{\"ts\":\"");
		at = put(out, at, sizeof(out), ts);
		at = put(out, at, sizeof(out), "\",\"level\":\"");
		at = put(out, at, sizeof(out), log_level_name(level));
		at = put(out, at, sizeof(out), "\",\"src\":");
		at = put_quoted(out, at, sizeof(out), src);
		at = put(out, at, sizeof(out), ",\"msg\":");
		at = put_quoted(out, at, sizeof(out), msg);
		at = put(out, at, sizeof(out), "}");
	} else {
		at = put(out, at, sizeof(out), "ts=");
		at = put(out, at, sizeof(out), ts);
		at = put(out, at, sizeof(out), " level=");
		at = put(out, at, sizeof(out), log_level_name(level));
		at = put(out, at, sizeof(out), " src=");
		at = put(out, at, sizeof(out), src);
		at = put(out, at, sizeof(out), " msg=");
		at = put_quoted(out, at, sizeof(out), msg);
	}
	out[at++] = '\n';
	emit(out, at);
}
