/* Time: a monotonic clock for durations and timeouts (never the wall clock, which jumps), and
 * the wall clock for timestamps that people and other systems read. */
#ifndef COMMON_CLOCK_H
#define COMMON_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#define CLOCK_ISO8601_LEN 24 /* "2026-10-01T12:00:00.123Z" */

/* Nanoseconds on CLOCK_MONOTONIC since an arbitrary point. */
uint64_t clock_mono_ns(void);
/* Milliseconds since the epoch on CLOCK_REALTIME. */
int64_t clock_wall_ms(void);
/* Seconds as a double between two clock_mono_ns() readings. */
double clock_elapsed_s(uint64_t start_ns, uint64_t end_ns);

/* RFC 3339 / ISO 8601 UTC: "2026-10-01T12:00:00Z" (with_ms = 0) or with ".123" before the Z.
 * `out` holds at least CLOCK_ISO8601_LEN + 1 bytes. 0 or ERR_INVAL for a time gmtime refuses. */
int clock_format_iso8601(char *out, size_t size, int64_t wall_ms, int with_ms);

/* The CLOCK_REALTIME time `ms` milliseconds from now, as pthread_cond_timedwait() and
 * pthread_mutex_timedlock() take it. */
struct timespec;
void clock_deadline(struct timespec *out, int64_t ms);

/* Sleeps `ms` milliseconds, resuming after signals. */
void clock_sleep_ms(uint64_t ms);

#endif
