/* A growable byte buffer with a hard maximum, after curl's dynbuf: every buffer that grows from
 * input says how large it may become, and growing past that is an error (ERR_LIMIT), not an
 * allocation of whatever the input asked for. The content is always NUL-terminated (the NUL is
 * not counted in len, but does count against max). */
#ifndef COMMON_BUF_H
#define COMMON_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data; /* NULL until the first append */
	size_t len;
	size_t cap;
	size_t max; /* the most bytes len may reach */
};

/* Works on caller memory; allocates nothing until the first append. */
void buf_init(struct buf *b, size_t max);
/* Frees the content; the buffer can be used again after buf_init(). */
void buf_finish(struct buf *b);
/* Forgets the content, keeps the allocation. */
void buf_reset(struct buf *b);

/* All return 0, or ERR_LIMIT (nothing appended) or ERR_NOMEM. */
int buf_append(struct buf *b, const void *data, size_t len);
int buf_append_str(struct buf *b, const char *s);
int buf_append_char(struct buf *b, char c);
int buf_appendf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vappendf(struct buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Makes room for `more` bytes beyond len (ERR_LIMIT past max). */
int buf_reserve(struct buf *b, size_t more);

/* The content as a string: "" for an empty buffer, never NULL. */
const char *buf_str(const struct buf *b);

/* Hands the content to the caller (free() it) and leaves the buffer empty. Never NULL. */
char *buf_detach(struct buf *b);

#endif
