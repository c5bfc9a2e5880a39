/* The benchmarks' floor: git itself, spawned with an argument vector (never a shell). */
#ifndef TESTS_BENCH_GIT_FLOOR_H
#define TESTS_BENCH_GIT_FLOOR_H

#include <stddef.h>

/* Runs `argv` (argv[0] "git", found on PATH) with stdout captured: into *out (malloc'd,
 * NUL-terminated, its length in *len) when `out` is not NULL; its lines counted into *lines
 * when `lines` is not NULL. Returns the wall time in seconds; -1 when git cannot be spawned;
 * -2 when it fails or its output cannot be held. */
double bench_git(const char *const *argv, char **out, size_t *len, size_t *lines);

#endif
