/* The Python scanner's entry point: checks the size and the UTF-8 of a file, runs the tokenizer
 * and the statement layer over its logical lines, resolves the uses, and owns the memory of the
 * result (one arena for every string and small array, malloc'd arrays for the big lists). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/limits.h"
#include "common/log.h"
#include "scan_internal.h"

#define ARENA_CHUNK       (64 * KIB)
#define ARENA_FIRST_CHUNK (2 * KIB)

struct arena_chunk {
	struct arena_chunk *next;
	size_t used;
	size_t cap;
	_Alignas(16) unsigned char data[];
};

void *scan__alloc(struct arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n == 0)
		n = 16;
	struct arena_chunk *c = a->head;
	if (!c || c->cap - c->used < n) {
		/* Chunks double from ARENA_FIRST_CHUNK to ARENA_CHUNK: most arenas (one per scanned
		 * file, thousands kept by a catalog cache) hold a few KiB, and a first chunk of
		 * 64 KiB each cost ~0.5 GB at PyTorch's scale. */
		size_t grow = !c                         ? ARENA_FIRST_CHUNK
			      : c->cap < ARENA_CHUNK / 2 ? 2 * c->cap
							 : ARENA_CHUNK;
		bool own = n >= grow; /* a block of its own: the current chunk goes on filling */
		size_t cap = own ? n : grow;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		if (own && a->head) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	void *p = c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

char *scan__strndup(struct arena *a, const char *s, size_t n)
{
	char *p = scan__alloc(a, n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

void scan__arena_free(struct arena *a)
{
	struct arena_chunk *c = a->head;
	while (c) {
		struct arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
}

void *scan__grow(void *arr, size_t n, size_t *cap, size_t elem)
{
	if (n < *cap)
		return arr;
	size_t nc = *cap ? *cap * 2 : 8;
	if (nc > SIZE_MAX / elem)
		return NULL;
	void *p = realloc(arr, nc * elem);
	if (p)
		*cap = nc;
	return p;
}

void scan__warn(struct scan_state *st, uint32_t line, const char *fmt, ...)
{
	if (st->f->n_warnings >= SCAN_WARNINGS_MAX) {
		st->dropped_warnings++;
		return;
	}
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct scan_warning *w =
	    scan__grow(st->f->warnings, st->f->n_warnings, &st->cap_warn, sizeof(*w));
	if (!w)
		return;
	st->f->warnings = w;
	const char *m = scan__strndup(st->arena, msg, strlen(msg));
	if (m)
		w[st->f->n_warnings++] = (struct scan_warning){ line, m };
}

/* The offset of the first byte that is not valid UTF-8 (overlongs, surrogates and code points
 * past U+10FFFF are invalid), or len. */
static size_t utf8_invalid_at(const unsigned char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		unsigned char c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t n;
		uint32_t cp;
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return i;
		}
		if (len - i <= n)
			return i;
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return i;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
			return i;
		i += n + 1;
	}
	return len;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int scan_lines(struct scan_state *st)
{
	struct lexer lx = { .d = st->d, .len = st->len, .pos = 0, .line = 1, .st = st };
	if (st->len >= 3 && memcmp(st->d, "\xef\xbb\xbf", 3) == 0)
		lx.pos = 3;
	struct lline ll = { 0 };
	int rc;
	while ((rc = scan__lex_next(&lx, &ll)) == 1) {
		if (scan__statement(st, &ll)) {
			rc = st->err;
			break;
		}
	}
	free(ll.toks);
	if (rc < 0)
		return rc;
	if (st->n_pending) {
		scan__warn(st, st->pending_line, "decorator not followed by def or class");
		st->module_hash = scan__mix(st->module_hash, st->pending_hash);
	}
	scan__close_all(st);
	st->f->n_lines =
	    lx.line - (lx.len > 0 && (st->d[lx.len - 1] == '\n' || st->d[lx.len - 1] == '\r'));
	if (st->len == 0)
		st->f->n_lines = 0;
	st->f->module_hash = scan__mix(st->module_hash, st->module_lines);
	if (st->dropped_warnings)
		log_debug("scan: %s: %zu more warnings dropped", st->f->path, st->dropped_warnings);
	return scan__resolve_uses(st);
}

int selector_scan(struct scan_file **out, const char *path, const char *module_path,
		  const char *data, size_t len)
{
	if (!out || !path || (!data && len))
		return err_set(ERR_INVAL, "selector_scan: NULL argument");
	*out = NULL;
	if (len > PYTHON_FILE_MAX)
		return err_set(ERR_LIMIT, "%s: %zu bytes, more than PYTHON_FILE_MAX (%zu)", path,
			       len, (size_t)PYTHON_FILE_MAX);
	struct scan_file *f = calloc(1, sizeof(*f));
	struct arena *arena = calloc(1, sizeof(*arena));
	if (!f || !arena) {
		free(f);
		free(arena);
		return err_set(ERR_NOMEM, "scan: out of memory");
	}
	f->arena_ = arena;
	struct scan_state st = { .f = f,
				 .arena = arena,
				 .d = data ? data : "",
				 .len = len,
				 .module_path = module_path,
				 .module_hash = SCAN_HASH_INIT,
				 .pending_hash = SCAN_HASH_INIT,
				 .module_first = true };
	st.is_package = ends_with(path, "__init__.py");
	f->path = scan__strndup(arena, path, strlen(path));
	f->module_path =
	    module_path ? scan__strndup(arena, module_path, strlen(module_path)) : NULL;
	int rc = (!f->path || (module_path && !f->module_path))
		     ? err_set(ERR_NOMEM, "scan: out of memory")
		     : 0;
	size_t bad = rc ? len : utf8_invalid_at((const unsigned char *)st.d, len);
	const char *nul = rc || !len ? NULL : memchr(st.d, '\0', len);
	if (!rc && bad < len) {
		f->skipped = true;
		scan__warn(&st, 0, "not UTF-8 at byte offset %zu: skipped", bad);
		log_warn("scan: %s is not UTF-8 at byte offset %zu: skipped", path, bad);
	} else if (!rc && nul) { /* Python refuses such source too ("null bytes") */
		f->skipped = true;
		scan__warn(&st, 0, "a NUL byte at byte offset %zu: skipped", (size_t)(nul - st.d));
		log_warn("scan: %s has a NUL byte at byte offset %zu: skipped", path,
			 (size_t)(nul - st.d));
	} else if (!rc) {
		rc = scan_lines(&st);
		if (!rc)
			rc = scan__generated(f, arena, st.d, len);
		if (!rc)
			rc = scan__opsamples(f, arena, st.d, len);
	}
	free(st.pending);
	free(st.regs);
	free(st.uses);
	free(st.assigns);
	free(st.templates);
	free(st.sites);
	if (rc) {
		scan_file_destroy(f);
		return rc;
	}
	*out = f;
	return 0;
}

void scan_file_destroy(struct scan_file *f)
{
	if (!f)
		return;
	if (f->arena_) {
		scan__arena_free(f->arena_);
		free(f->arena_);
	}
	free(f->classes);
	free(f->functions);
	free(f->imports);
	free(f->instantiates);
	free(f->opinfos);
	free(f->globals);
	free(f->bindings);
	free(f->warnings);
	free(f);
}

int selector_scan_function_at(const struct scan_file *f, uint32_t line)
{
	int best = -1;
	for (size_t k = 0; f && k < f->n_functions; k++)
		if (f->functions[k].deco_line <= line && line <= f->functions[k].last_line)
			best = (int)k; /* later defs that hold the line are nested deeper */
	return best;
}

int selector_scan_class_at(const struct scan_file *f, uint32_t line)
{
	int best = -1;
	for (size_t k = 0; f && k < f->n_classes; k++)
		if (f->classes[k].deco_line <= line && line <= f->classes[k].last_line)
			best = (int)k;
	return best;
}

int selector_scan_opinfo_at(const struct scan_file *f, uint32_t line)
{
	int best = -1;
	for (size_t k = 0; f && k < f->n_opinfos; k++)
		if (f->opinfos[k].first_line <= line && line <= f->opinfos[k].last_line)
			best = (int)k;
	return best;
}
