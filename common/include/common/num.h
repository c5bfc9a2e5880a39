/* Strict number parsing for every number that comes from outside (flags, config, YAML, JSON
 * text, HTTP headers). Unlike atoi() and bare strtol(): the whole text must be the number (no
 * leading space, no trailing garbage), overflow is an error, and the range is the caller's.
 * Each returns 0 or ERR_INVAL with err_last() saying what was wrong. */
#ifndef COMMON_NUM_H
#define COMMON_NUM_H

#include <stddef.h>
#include <stdint.h>

/* Decimal, optional leading '-' (for signed) or '+'; no spaces, no "0x". */
int num_parse_i64(int64_t *out, const char *s, int64_t min, int64_t max);
int num_parse_u64(uint64_t *out, const char *s, uint64_t min, uint64_t max);
int num_parse_int(int *out, const char *s, int min, int max);

/* A finite decimal or exponent float ("1e-3", "-0.5"); no "inf", "nan" or hex floats. */
int num_parse_double(double *out, const char *s, double min, double max);

/* A byte count with an optional binary suffix: "4096", "64KiB", "2MiB", "1GiB" (also K, M, G
 * meaning the same binary multiples). */
int num_parse_bytes(uint64_t *out, const char *s, uint64_t max);

/* The value of one hex digit, either case; -1 for any other character. */
int num_hexval(char c);

/* The same for text that is not NUL-terminated (a header value, a YAML scalar). */
int num_parse_i64n(int64_t *out, const char *s, size_t len, int64_t min, int64_t max);
int num_parse_doublen(double *out, const char *s, size_t len, double min, double max);

#endif
