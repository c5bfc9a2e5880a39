/* Error reporting: functions return an int (0 ok, a negative code from the short list below),
 * and the human-readable detail lives in a thread-local slot set by err_set(). A caller that
 * gets an error propagates the code and leaves the detail alone, or adds context in front of
 * it with err_prefix(); it never overwrites it. Modelled on libgit2's git_error_last(). */
#ifndef COMMON_ERR_H
#define COMMON_ERR_H

#include <stdarg.h>

enum err_code {
	ERR_OK = 0,
	ERR_GENERIC = -1,  /* anything not below */
	ERR_NOMEM = -2,    /* allocation failed */
	ERR_INVAL = -3,    /* bad input: syntax, type, range */
	ERR_LIMIT = -4,    /* a size or count limit was hit */
	ERR_IO = -5,       /* the operating system refused (errno is in the detail) */
	ERR_NOTFOUND = -6, /* the named thing does not exist */
	ERR_AUTH = -7,     /* a signature or token did not verify */
	ERR_EXISTS = -8,   /* the thing exists already (duplicate, double free) */
	ERR_BADSTATE = -9, /* the call is not valid in the object's current state */
};

/* Records the detail of the current error for this thread and returns `code`, so that a
 * failing path reads `return err_set(ERR_INVAL, "...", ...);`. */
int err_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Like err_set() with the text of errno appended (": No such file or directory"). */
int err_set_errno(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Puts "context: " in front of the current detail and returns the current code; a context
 * that ends in ": " already gets no second one. */
int err_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The detail of this thread's last error; "" when there is none. Valid until the next err_ call
 * on this thread. */
const char *err_last(void);

/* The code of this thread's last error; 0 when there is none. */
int err_last_code(void);

/* Forgets this thread's last error. */
void err_clear(void);

/* A short name for a code: "invalid input", "limit exceeded", ... */
const char *err_code_name(int code);

#endif
