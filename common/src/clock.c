/* Clocks; see clock.h. */
#include "common/clock.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "common/err.h"

uint64_t clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t clock_wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double clock_elapsed_s(uint64_t start_ns, uint64_t end_ns)
{
	return end_ns >= start_ns ? (double)(end_ns - start_ns) / 1e9 : 0.0;
}

int clock_format_iso8601(char *out, size_t size, int64_t wall_ms, int with_ms)
{
	int64_t secs = wall_ms >= 0 ? wall_ms / 1000 : (wall_ms - 999) / 1000;
	int ms = (int)(wall_ms - secs * 1000);
	time_t t = (time_t)secs;
	struct tm tm;
	if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 0)
		return err_set(ERR_INVAL, "time %lld ms is out of range", (long long)wall_ms);
	int n;
	if (with_ms)
		n = snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
			     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
	else
		n = snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
			     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	if (n < 0 || (size_t)n >= size)
		return err_set(ERR_LIMIT, "timestamp buffer too small");
	return 0;
}

void clock_sleep_ms(uint64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void clock_deadline(struct timespec *out, int64_t ms)
{
	clock_gettime(CLOCK_REALTIME, out);
	int64_t ns = out->tv_nsec + ms % 1000 * 1000000;
	out->tv_sec += (time_t)(ms / 1000 + ns / 1000000000);
	out->tv_nsec = (long)(ns % 1000000000);
}
