/* Bounded growable buffers; see buf.h. */
#include "common/buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

void buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max < SIZE_MAX / 2 ? max : SIZE_MAX / 2; /* keeps len + more + 1 from wrapping */
}

void buf_finish(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

int buf_reserve(struct buf *b, size_t more)
{
	if (more > b->max || b->len > b->max - more)
		return err_set(ERR_LIMIT, "buffer would exceed its maximum of %zu bytes", b->max);
	size_t need = b->len + more + 1; /* the NUL; cannot overflow: max < SIZE_MAX */
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if (cap > b->max + 1)
		cap = b->max + 1;
	char *p = realloc(b->data, cap);
	if (!p)
		return err_set(ERR_NOMEM, "out of memory growing a buffer to %zu bytes", cap);
	b->data = p;
	b->cap = cap;
	return 0;
}

int buf_append(struct buf *b, const void *data, size_t len)
{
	int rc = buf_reserve(b, len);
	if (rc)
		return rc;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int buf_append_str(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_append_char(struct buf *b, char c)
{
	return buf_append(b, &c, 1);
}

int buf_vappendf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return err_set(ERR_INVAL, "bad format string");
	int rc = buf_reserve(b, (size_t)n);
	if (rc)
		return rc;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_appendf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = buf_vappendf(b, fmt, ap);
	va_end(ap);
	return rc;
}

const char *buf_str(const struct buf *b)
{
	return b->data ? b->data : "";
}

char *buf_detach(struct buf *b)
{
	char *p = b->data;
	if (!p) {
		p = calloc(1, 1);
		if (!p)
			abort(); /* one byte: nothing sensible is left to do */
	}
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	return p;
}
