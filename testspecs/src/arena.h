/* A bump allocator that owns everything a spec_set points at: strings, arrays and structs are
 * carved from large chunks and freed together by spec_arena_destroy(). Private to testspecs. */
#ifndef TESTSPECS_ARENA_H
#define TESTSPECS_ARENA_H

#include <stddef.h>

struct spec_arena;

struct spec_arena *spec_arena_create(void);
void spec_arena_destroy(struct spec_arena *a);
/* Zeroed memory for `n` objects of `size` bytes; NULL on overflow or when out of memory. */
void *spec_arena_calloc(struct spec_arena *a, size_t n, size_t size);
/* A NUL-terminated copy of `len` bytes of `s`. */
char *spec_arena_strndup(struct spec_arena *a, const char *s, size_t len);
char *spec_arena_strdup(struct spec_arena *a, const char *s);

#endif
