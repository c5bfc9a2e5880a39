/* The spec arena: chunks of at least 64 KiB, each allocation aligned to 16 bytes. A large
 * request gets a chunk of its own. */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK (64 * 1024)
#define ARENA_ALIGN 16

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

struct spec_arena {
	struct arena_chunk *head;
};

struct spec_arena *spec_arena_create(void)
{
	return calloc(1, sizeof(struct spec_arena));
}

void spec_arena_destroy(struct spec_arena *a)
{
	if (!a)
		return;
	struct arena_chunk *c = a->head;
	while (c) {
		struct arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	free(a);
}

static void *arena_alloc(struct spec_arena *a, size_t size)
{
	size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (size == 0)
		size = ARENA_ALIGN;
	struct arena_chunk *c = a->head;
	if (c && c->size - c->used >= size) {
		void *p = c->data + c->used;
		c->used += size;
		return p;
	}
	size_t want = size > ARENA_CHUNK ? size : ARENA_CHUNK;
	if (want > SIZE_MAX - sizeof(*c))
		return NULL;
	struct arena_chunk *n = malloc(sizeof(*n) + want);
	if (!n)
		return NULL;
	n->size = want;
	n->used = size;
	if (c && size > ARENA_CHUNK) {
		/* keep the current chunk as the head: it still has room for small things */
		n->next = c->next;
		c->next = n;
	} else {
		n->next = c;
		a->head = n;
	}
	return n->data;
}

void *spec_arena_calloc(struct spec_arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	void *p = arena_alloc(a, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

char *spec_arena_strndup(struct spec_arena *a, const char *s, size_t len)
{
	if (len == SIZE_MAX)
		return NULL;
	char *p = arena_alloc(a, len + 1);
	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *spec_arena_strdup(struct spec_arena *a, const char *s)
{
	return spec_arena_strndup(a, s, strlen(s));
}
