/* Thread-local error detail. See err.h for the discipline. */
#include "common/err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define ERR_TEXT_MAX 1024

static _Thread_local char err_text[ERR_TEXT_MAX];
static _Thread_local int err_code_last;

__attribute__((format(printf, 2, 0))) static int set_v(int code, const char *fmt, va_list ap,
						       int with_errno)
{
	int saved = errno;
	int n = vsnprintf(err_text, sizeof(err_text), fmt, ap);
	if (n < 0)
		err_text[0] = '\0';
	if (with_errno) {
		size_t used = strlen(err_text);
		snprintf(err_text + used, sizeof(err_text) - used, ": %s", strerror(saved));
	}
	err_code_last = code;
	errno = saved;
	return code;
}

int err_set(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_v(code, fmt, ap, 0);
	va_end(ap);
	return code;
}

int err_set_errno(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_v(code, fmt, ap, 1);
	va_end(ap);
	return code;
}

int err_prefix(const char *fmt, ...)
{
	char prefix[ERR_TEXT_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	if (n < 0)
		return err_code_last;
	/* Shift the old detail right to make room for "prefix: ", cutting its tail if needed. A
	 * prefix written with its own separator ("file x: ") is taken without it. */
	size_t plen = strlen(prefix);
	while (plen > 0 && prefix[plen - 1] == ' ')
		plen--;
	if (plen > 0 && prefix[plen - 1] == ':')
		plen--;
	if (plen > ERR_TEXT_MAX - 3)
		plen = ERR_TEXT_MAX - 3;
	size_t olen = strlen(err_text);
	if (plen + 2 + olen > ERR_TEXT_MAX - 1)
		olen = ERR_TEXT_MAX - 1 - plen - 2;
	memmove(err_text + plen + 2, err_text, olen);
	memcpy(err_text, prefix, plen);
	memcpy(err_text + plen, ": ", 2);
	err_text[plen + 2 + olen] = '\0';
	if (err_code_last == 0)
		err_code_last = ERR_GENERIC;
	return err_code_last;
}

const char *err_last(void)
{
	return err_text;
}

int err_last_code(void)
{
	return err_code_last;
}

void err_clear(void)
{
	err_text[0] = '\0';
	err_code_last = 0;
}

const char *err_code_name(int code)
{
	switch (code) {
	case ERR_OK:
		return "ok";
	case ERR_NOMEM:
		return "out of memory";
	case ERR_INVAL:
		return "invalid input";
	case ERR_LIMIT:
		return "limit exceeded";
	case ERR_IO:
		return "i/o error";
	case ERR_NOTFOUND:
		return "not found";
	case ERR_AUTH:
		return "authentication failed";
	case ERR_EXISTS:
		return "already exists";
	case ERR_BADSTATE:
		return "invalid state";
	default:
		return "error";
	}
}
