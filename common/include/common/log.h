/* Logging to stderr. Levels are checked before anything is formatted, so a disabled debug line
 * costs one comparison. Each line carries the level, `src=file:line` relative to the repository
 * and the message; logfmt by default, JSON lines on request. The message is scanned for things
 * that look like secrets (bearer tokens, `token=`/`secret=`/`password=` values, HMAC signatures,
 * GitHub tokens) and those are printed as [redacted]: never pass a secret on purpose, but a
 * mistake must not leak one. */
#ifndef COMMON_LOG_H
#define COMMON_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum log_level {
	LOG_SILENT = 0,
	LOG_ERROR = 1,
	LOG_WARN = 2,
	LOG_INFO = 3,
	LOG_DEBUG = 4,
	LOG_TRACE = 5,
};

enum log_format {
	LOG_FORMAT_LOGFMT = 0,
	LOG_FORMAT_JSON = 1,
};

/* The sink receives each finished line (with its newline). The default writes to stderr. */
typedef void (*log_sink_fn)(const char *line, size_t len, void *ctx);

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
void log_set_format(enum log_format format);
void log_set_sink(log_sink_fn sink, void *ctx); /* NULL restores stderr */

/* "error", "warn", "info", "debug", "trace", "silent" -> level; 0 on success, ERR_INVAL else. */
int log_level_parse(enum log_level *out, const char *name);
const char *log_level_name(enum log_level level);

/* Copies `in` to `out` (always NUL-terminated, cut to `size`) with every secret-looking value
 * replaced by [redacted]. Exposed for tests and for callers that print outside the logger. */
void log_redact(char *out, size_t size, const char *in);

void log__write(enum log_level level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

extern enum log_level log__level;

#define log__at(lvl, ...)                                                                          \
	do {                                                                                       \
		if ((lvl) <= log__level)                                                           \
			log__write((lvl), __FILE__, __LINE__, __VA_ARGS__);                        \
	} while (0)

#define log_error(...) log__at(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log__at(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log__at(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log__at(LOG_DEBUG, __VA_ARGS__)
#define log_trace(...) log__at(LOG_TRACE, __VA_ARGS__)

#endif
