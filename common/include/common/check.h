/* A soft assertion for conditions that are bugs in our own code, not bad input: it logs where
 * it failed, aborts in debug builds (so tests catch it), and evaluates to false in release
 * builds so that the caller can return an error instead of crashing the daemon. After sway's
 * sway_assert(). Usage: `if (!CHECK(job != NULL)) return -1;` */
#ifndef COMMON_CHECK_H
#define COMMON_CHECK_H

#include <stdbool.h>

bool check__fail(const char *expr, const char *file, int line);

#define CHECK(cond) ((cond) ? true : check__fail(#cond, __FILE__, __LINE__))

#endif
