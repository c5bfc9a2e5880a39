/* Strict number parsing; see num.h. Everything funnels into two routines that take a length,
 * so that header values and YAML scalars need no copy by the caller. */
#include "common/num.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"

/* Copies `s[0..len)` into `tmp` for the libc parsers, refusing empty, over-long and NUL-holding
 * text. */
static int to_cstr(char tmp[NUM_TEXT_MAX + 1], const char *s, size_t len)
{
	if (len == 0)
		return err_set(ERR_INVAL, "expected a number, got an empty value");
	if (len > NUM_TEXT_MAX)
		return err_set(ERR_INVAL, "number too long (%zu characters, at most %d)", len,
			       NUM_TEXT_MAX);
	if (memchr(s, '\0', len))
		return err_set(ERR_INVAL, "number contains a NUL byte");
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	return 0;
}

int num_parse_i64n(int64_t *out, const char *s, size_t len, int64_t min, int64_t max)
{
	char tmp[NUM_TEXT_MAX + 1];
	int rc = to_cstr(tmp, s, len);
	if (rc)
		return rc;
	size_t i = (tmp[0] == '-' || tmp[0] == '+') ? 1 : 0;
	if (tmp[i] < '0' || tmp[i] > '9')
		return err_set(ERR_INVAL, "'%s' is not a whole number", tmp);
	for (size_t j = i; tmp[j]; j++)
		if (tmp[j] < '0' || tmp[j] > '9')
			return err_set(ERR_INVAL, "'%s' is not a whole number (stray '%c')", tmp,
				       tmp[j]);
	errno = 0;
	char *end = NULL;
	long long v = strtoll(tmp, &end, 10);
	if (errno == ERANGE || v < min || v > max)
		return err_set(ERR_INVAL, "%s is out of range [%lld, %lld]", tmp, (long long)min,
			       (long long)max);
	*out = (int64_t)v;
	return 0;
}

int num_parse_i64(int64_t *out, const char *s, int64_t min, int64_t max)
{
	return num_parse_i64n(out, s, strlen(s), min, max);
}

int num_parse_int(int *out, const char *s, int min, int max)
{
	int64_t v;
	int rc = num_parse_i64(&v, s, min, max);
	if (rc == 0)
		*out = (int)v;
	return rc;
}

int num_parse_u64(uint64_t *out, const char *s, uint64_t min, uint64_t max)
{
	char tmp[NUM_TEXT_MAX + 1];
	int rc = to_cstr(tmp, s, strlen(s));
	if (rc)
		return rc;
	size_t i = tmp[0] == '+' ? 1 : 0;
	if (tmp[i] == '\0')
		return err_set(ERR_INVAL, "'%s' is not a whole number", tmp);
	for (size_t j = i; tmp[j]; j++)
		if (tmp[j] < '0' || tmp[j] > '9')
			return err_set(ERR_INVAL, "'%s' is not a non-negative whole number", tmp);
	errno = 0;
	unsigned long long v = strtoull(tmp + i, NULL, 10);
	if (errno == ERANGE || v < min || v > max)
		return err_set(ERR_INVAL, "%s is out of range [%llu, %llu]", tmp,
			       (unsigned long long)min, (unsigned long long)max);
	*out = (uint64_t)v;
	return 0;
}

int num_parse_doublen(double *out, const char *s, size_t len, double min, double max)
{
	char tmp[NUM_TEXT_MAX + 1];
	int rc = to_cstr(tmp, s, len);
	if (rc)
		return rc;
	/* Only [sign] digits [. digits] [e [sign] digits]: no inf, nan, hex or spaces. */
	size_t i = (tmp[0] == '-' || tmp[0] == '+') ? 1 : 0;
	size_t digits = 0;
	while (tmp[i] >= '0' && tmp[i] <= '9')
		i++, digits++;
	if (tmp[i] == '.') {
		i++;
		while (tmp[i] >= '0' && tmp[i] <= '9')
			i++, digits++;
	}
	if (digits == 0)
		return err_set(ERR_INVAL, "'%s' is not a number", tmp);
	if (tmp[i] == 'e' || tmp[i] == 'E') {
		i++;
		if (tmp[i] == '-' || tmp[i] == '+')
			i++;
		size_t ed = 0;
		while (tmp[i] >= '0' && tmp[i] <= '9')
			i++, ed++;
		if (ed == 0)
			return err_set(ERR_INVAL, "'%s' has an empty exponent", tmp);
	}
	if (tmp[i] != '\0')
		return err_set(ERR_INVAL, "'%s' is not a number (stray '%c')", tmp, tmp[i]);
	errno = 0;
	double v = strtod(tmp, NULL);
	if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1.0))
		return err_set(ERR_INVAL, "%s overflows a double", tmp);
	if (!(v >= min && v <= max))
		return err_set(ERR_INVAL, "%s is out of range [%g, %g]", tmp, min, max);
	*out = v;
	return 0;
}

int num_parse_double(double *out, const char *s, double min, double max)
{
	return num_parse_doublen(out, s, strlen(s), min, max);
}

int num_parse_bytes(uint64_t *out, const char *s, uint64_t max)
{
	static const struct {
		const char *suffix;
		unsigned shift;
	} units[] = { { "KiB", 10 }, { "MiB", 20 }, { "GiB", 30 }, { "TiB", 40 },
		      { "K", 10 },   { "M", 20 },   { "G", 30 },   { "T", 40 } };
	size_t len = strlen(s);
	size_t digits = 0;
	while (digits < len && s[digits] >= '0' && s[digits] <= '9')
		digits++;
	unsigned shift = 0;
	if (digits < len) {
		const char *suf = s + digits;
		size_t u = 0;
		for (; u < sizeof(units) / sizeof(units[0]); u++)
			if (strcmp(suf, units[u].suffix) == 0)
				break;
		if (u == sizeof(units) / sizeof(units[0]))
			return err_set(ERR_INVAL,
				       "'%.64s' is not a byte size (use a whole number with an "
				       "optional KiB, MiB, GiB or TiB)",
				       s);
		shift = units[u].shift;
	}
	if (digits == 0)
		return err_set(ERR_INVAL, "'%.64s' is not a byte size", s);
	char tmp[NUM_TEXT_MAX + 1];
	int rc = to_cstr(tmp, s, digits);
	if (rc)
		return rc;
	uint64_t v;
	rc = num_parse_u64(&v, tmp, 0, UINT64_MAX);
	if (rc)
		return rc;
	if (shift && v > (UINT64_MAX >> shift))
		return err_set(ERR_INVAL, "'%.64s' overflows", s);
	v <<= shift;
	if (v > max)
		return err_set(ERR_INVAL, "'%.64s' is more than the maximum of %llu bytes", s,
			       (unsigned long long)max);
	*out = v;
	return 0;
}

int num_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
