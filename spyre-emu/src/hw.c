/* The hardware description: a strict reader of spyre-emu/hw/spyre.yaml and files like it.
 *
 * The document is one mapping; every key of `fields` below must appear exactly once, as a
 * mapping {value, label, source}: `label` is `fact` or `estimate`, a fact needs a `source`.
 * Unknown keys, duplicates, aliases, anchors, tags other than plain scalars, and more than one
 * document are errors. Errors read "origin:line:col: key 'lx_bytes': ...", 1-based.
 *
 * Bounds: the document is at most YAML_DOC_MAX bytes and every scalar at most YAML_SCALAR_MAX
 * (libyaml has read it by then, but only within the document bound). The reader is event
 * driven and the structure is two levels deep, so any deeper node is refused at its first
 * event: nesting never costs more than three levels of state, well below YAML_DEPTH_MAX. */
#include "spyre-emu/hw.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/num.h"

/* The shipped description, generated at build time by spyre-emu/hw/embed.py. */
extern const char spyre_hw__default_yaml[];
extern const size_t spyre_hw__default_yaml_len;

#define GIB ((uint64_t)1 << 30)

enum ftype { F_TEXT, F_INT, F_U32, F_BYTES, F_DOUBLE };

/* One key of the file: its type, where it goes in struct spyre_hw, and its range. */
struct field {
	const char *key;
	enum ftype type;
	size_t offset;
	double min, max;
};

#define FIELD(name, type, lo, hi)                                                                  \
	{                                                                                          \
#name, type, offsetof(struct spyre_hw, name), lo, hi                               \
	}
static const struct field fields[] = {
	FIELD(name, F_TEXT, 0, 0),
	FIELD(cores, F_INT, 1, SPYRE_CORES_MAX),
	FIELD(corelets_per_core, F_INT, 1, 16),
	FIELD(pe_rows, F_INT, 1, 256),
	FIELD(pe_cols, F_INT, 1, 256),
	FIELD(lx_bytes, F_BYTES, 4096, (double)GIB),
	FIELD(stick_bytes, F_U32, 128, 128), /* layouts assume 128-byte sticks */
	FIELD(ring_bytes_per_cycle, F_U32, 1, 65536),
	FIELD(ring_hop_cycles, F_U32, 0, 1000000),
	FIELD(dev_mem_bytes, F_BYTES, 1 << 20, (double)(1024 * GIB)),
	FIELD(dev_mem_gbps, F_DOUBLE, 0.001, 1e6),
	FIELD(window_bytes, F_BYTES, 1 << 20, (double)(1024 * GIB)),
	FIELD(clock_ghz, F_DOUBLE, 0.001, 100),
	FIELD(vec_elems_per_cycle, F_U32, 1, 65536),
	FIELD(transcendental_factor, F_U32, 1, 100000),
	FIELD(dma_setup_cycles, F_U32, 0, 100000000),
	FIELD(pe_simd_lanes, F_U32, 1, 64), /* optional: 1 when absent */
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))
_Static_assert(NFIELDS <= SPYRE_HW_PARAMS_MAX, "more keys than spyre_hw.params holds");
_Static_assert(NFIELDS <= 32, "the seen-mask is 32 bits");

struct reader {
	yaml_parser_t parser;
	const char *origin;
	const char *text; /* the document, to place reader errors (which carry an offset) */
	size_t len;
	struct spyre_hw *hw;
	uint32_t seen; /* bit i: fields[i] was read */
};

/* Records a located error: "origin:line:col: key 'k': detail" (key part only if known). */
__attribute__((format(printf, 4, 5))) static int fail(struct reader *r, yaml_mark_t mark,
						      const char *key, const char *fmt, ...)
{
	char detail[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (key != NULL)
		return err_set(ERR_INVAL, "%s:%zu:%zu: key '%.40s': %s", r->origin, mark.line + 1,
			       mark.column + 1, key, detail);
	return err_set(ERR_INVAL, "%s:%zu:%zu: %s", r->origin, mark.line + 1, mark.column + 1,
		       detail);
}

/* The line and column of a byte offset: libyaml's reader errors (bad UTF-8, control
 * characters) give only the offset. */
static yaml_mark_t offset_mark(const struct reader *r, size_t offset)
{
	yaml_mark_t m = { .index = offset };
	for (size_t i = 0; i < offset && i < r->len; i++) {
		if (r->text[i] == '\n') {
			m.line++;
			m.column = 0;
		} else if (((unsigned char)r->text[i] & 0xC0) != 0x80) {
			m.column++;
		}
	}
	return m;
}

/* The next event; libyaml's own errors (bad UTF-8, tabs, syntax) become located errors, and
 * aliases and anchors are refused here, once for every caller. */
static int next(struct reader *r, yaml_event_t *ev, const char *key)
{
	if (!yaml_parser_parse(&r->parser, ev)) {
		yaml_parser_t *p = &r->parser;
		yaml_mark_t m = p->problem_mark;
		if (p->error == YAML_READER_ERROR)
			m = offset_mark(r, p->problem_offset);
		if (p->error == YAML_MEMORY_ERROR)
			return err_set(ERR_NOMEM, "%s: out of memory while reading YAML",
				       r->origin);
		return fail(r, m, key, "YAML: %s%s%s", p->problem ? p->problem : "syntax error",
			    p->context ? " " : "", p->context ? p->context : "");
	}
	const char *anchor = NULL;
	if (ev->type == YAML_ALIAS_EVENT) {
		int rc = fail(r, ev->start_mark, key, "aliases are not allowed");
		yaml_event_delete(ev);
		return rc;
	}
	if (ev->type == YAML_SCALAR_EVENT)
		anchor = (const char *)ev->data.scalar.anchor;
	else if (ev->type == YAML_MAPPING_START_EVENT)
		anchor = (const char *)ev->data.mapping_start.anchor;
	else if (ev->type == YAML_SEQUENCE_START_EVENT)
		anchor = (const char *)ev->data.sequence_start.anchor;
	if (anchor != NULL) {
		int rc = fail(r, ev->start_mark, key, "anchors are not allowed");
		yaml_event_delete(ev);
		return rc;
	}
	if (ev->type == YAML_SCALAR_EVENT && ev->data.scalar.length > YAML_SCALAR_MAX) {
		int rc = fail(r, ev->start_mark, key, "a scalar of %zu bytes (at most %zu)",
			      ev->data.scalar.length, (size_t)YAML_SCALAR_MAX);
		yaml_event_delete(ev);
		return rc;
	}
	return 0;
}

/* Expects an event of one type; anything else is an error naming what was wanted. */
static int expect(struct reader *r, yaml_event_t *ev, yaml_event_type_t type, const char *key,
		  const char *what)
{
	int rc = next(r, ev, key);
	if (rc != 0)
		return rc;
	if (ev->type != type) {
		rc = fail(r, ev->start_mark, key, "expected %s", what);
		yaml_event_delete(ev);
	}
	return rc;
}

/* A scalar's text as a C string in `buf`, refusing embedded NULs and over-long text. */
static int scalar_text(struct reader *r, const yaml_event_t *ev, const char *key, char *buf,
		       size_t cap, const char *what)
{
	size_t len = ev->data.scalar.length;
	const char *s = (const char *)ev->data.scalar.value;
	if (memchr(s, '\0', len) != NULL)
		return fail(r, ev->start_mark, key, "%s contains a NUL byte", what);
	if (len >= cap)
		return fail(r, ev->start_mark, key, "%s is %zu bytes long (at most %zu)", what, len,
			    cap - 1);
	memcpy(buf, s, len);
	buf[len] = '\0';
	return 0;
}

static int parse_number(const struct field *f, void *dst, const char *text)
{
	int64_t i;
	uint64_t u;
	double d;
	int rc;
	switch (f->type) {
	case F_INT:
	case F_U32:
		rc = num_parse_i64(&i, text, (int64_t)f->min, (int64_t)f->max);
		if (rc == 0 && f->type == F_INT)
			*(int *)dst = (int)i;
		else if (rc == 0)
			*(uint32_t *)dst = (uint32_t)i;
		return rc;
	case F_BYTES:
		rc = num_parse_bytes(&u, text, (uint64_t)f->max);
		if (rc == 0 && u < (uint64_t)f->min)
			rc = err_set(ERR_INVAL, "%s is below the minimum %.0f", text, f->min);
		if (rc == 0)
			*(uint64_t *)dst = u;
		return rc;
	case F_DOUBLE:
		rc = num_parse_double(&d, text, f->min, f->max);
		if (rc == 0)
			*(double *)dst = d;
		return rc;
	case F_TEXT:
		break;
	}
	return ERR_GENERIC;
}

/* Whether a scalar is exactly `word` (an embedded NUL does not end it early). */
static bool scalar_is(const yaml_event_t *ev, const char *word)
{
	size_t n = strlen(word);
	return ev->data.scalar.length == n && memcmp(ev->data.scalar.value, word, n) == 0;
}

/* Stores a value scalar into its field of the description. */
static int store_value(struct reader *r, const struct field *f, const yaml_event_t *ev)
{
	char *dst = (char *)r->hw + f->offset;
	if (f->type == F_TEXT) {
		int rc = scalar_text(r, ev, f->key, dst, sizeof(r->hw->name), "the value");
		if (rc == 0 && dst[0] == '\0')
			rc = fail(r, ev->start_mark, f->key, "the value is empty");
		return rc;
	}
	char text[NUM_TEXT_MAX + 1];
	int rc = scalar_text(r, ev, f->key, text, sizeof(text), "the value");
	if (rc != 0)
		return rc;
	if (parse_number(f, dst, text) != 0) {
		char why[256];
		snprintf(why, sizeof(why), "%s", err_last());
		return fail(r, ev->start_mark, f->key, "%s", why);
	}
	return 0;
}

static int store_label(struct reader *r, struct spyre_hw_param *p, const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	if (scalar_is(ev, "fact"))
		p->label = SPYRE_HW_FACT;
	else if (scalar_is(ev, "estimate"))
		p->label = SPYRE_HW_ESTIMATE;
	else
		return fail(r, ev->start_mark, p->key, "label '%.40s' is neither fact nor estimate",
			    s);
	return 0;
}

enum { SUB_VALUE = 1, SUB_LABEL = 2, SUB_SOURCE = 4 };

/* Reads one sub-key of a key's mapping ("value", "label" or "source") and its scalar. */
static int read_subkey(struct reader *r, const struct field *f, struct spyre_hw_param *p,
		       const yaml_event_t *kev, unsigned *have)
{
	const char *sk = (const char *)kev->data.scalar.value;
	unsigned bit = scalar_is(kev, "value")    ? SUB_VALUE
		       : scalar_is(kev, "label")  ? SUB_LABEL
		       : scalar_is(kev, "source") ? SUB_SOURCE
						  : 0;
	if (bit == 0)
		return fail(r, kev->start_mark, f->key,
			    "unknown entry '%.40s' (expected value, label, source)", sk);
	if (*have & bit)
		return fail(r, kev->start_mark, f->key, "'%s' given twice", sk);
	*have |= bit;
	yaml_event_t ev;
	int rc = expect(r, &ev, YAML_SCALAR_EVENT, f->key, "a scalar");
	if (rc != 0)
		return rc;
	if (bit == SUB_VALUE)
		rc = store_value(r, f, &ev);
	else if (bit == SUB_LABEL)
		rc = store_label(r, p, &ev);
	else
		rc = scalar_text(r, &ev, f->key, p->source, sizeof(p->source), "the source");
	yaml_event_delete(&ev);
	return rc;
}

/* Reads the mapping {value, label, source} of one key. `at` marks the key. */
static int read_entry(struct reader *r, const struct field *f, yaml_mark_t at)
{
	struct spyre_hw_param *p = &r->hw->params[r->hw->nparams++];
	snprintf(p->key, sizeof(p->key), "%s", f->key);
	yaml_event_t ev;
	int rc = expect(r, &ev, YAML_MAPPING_START_EVENT, f->key,
			"a mapping {value: ..., label: fact|estimate, source: ...}");
	if (rc != 0)
		return rc;
	yaml_event_delete(&ev);
	unsigned have = 0;
	for (int guard = 0; guard < 8; guard++) {
		if ((rc = next(r, &ev, f->key)) != 0)
			return rc;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_mark_t end = ev.start_mark;
			yaml_event_delete(&ev);
			if (!(have & SUB_VALUE) || !(have & SUB_LABEL))
				return fail(r, at, f->key, "needs both a value and a label");
			if (p->label == SPYRE_HW_FACT && (!(have & SUB_SOURCE) || !p->source[0]))
				return fail(r, end, f->key, "a fact needs a source");
			return 0;
		}
		if (ev.type != YAML_SCALAR_EVENT)
			rc = fail(r, ev.start_mark, f->key, "expected value, label or source");
		else
			rc = read_subkey(r, f, p, &ev, &have);
		yaml_event_delete(&ev);
		if (rc != 0)
			return rc;
	}
	return fail(r, at, f->key, "too many entries");
}

/* Reads one top-level key and its entry; sets *done at the end of the mapping. */
static int read_key(struct reader *r, bool *done)
{
	yaml_event_t ev;
	int rc = next(r, &ev, NULL);
	if (rc != 0)
		return rc;
	if (ev.type == YAML_MAPPING_END_EVENT) {
		*done = true;
		yaml_event_delete(&ev);
		return 0;
	}
	if (ev.type != YAML_SCALAR_EVENT) {
		rc = fail(r, ev.start_mark, NULL, "expected a key");
		yaml_event_delete(&ev);
		return rc;
	}
	const char *key = (const char *)ev.data.scalar.value;
	size_t i = 0;
	while (i < NFIELDS && !scalar_is(&ev, fields[i].key))
		i++;
	if (i == NFIELDS)
		rc = fail(r, ev.start_mark, NULL, "unknown key '%.40s'", key);
	else if (r->seen & (1u << i))
		rc = fail(r, ev.start_mark, fields[i].key, "given twice");
	else {
		r->seen |= 1u << i;
		rc = read_entry(r, &fields[i], ev.start_mark);
	}
	yaml_event_delete(&ev);
	return rc;
}

/* Checks that the values agree with each other, once all are read. */
static int cross_check(struct reader *r, yaml_mark_t end)
{
	for (size_t i = 0; i < NFIELDS; i++)
		if (!(r->seen & (1u << i)) && strcmp(fields[i].key, "pe_simd_lanes") != 0)
			return fail(r, end, fields[i].key, "missing (every key is required)");
	const struct spyre_hw *hw = r->hw;
	if (hw->window_bytes > hw->dev_mem_bytes)
		return fail(r, end, "window_bytes", "larger than dev_mem_bytes");
	if (hw->lx_bytes % hw->stick_bytes != 0)
		return fail(r, end, "lx_bytes", "not a whole number of sticks");
	return 0;
}

static int read_document(struct reader *r)
{
	yaml_event_t ev;
	int rc = expect(r, &ev, YAML_STREAM_START_EVENT, NULL, "a stream");
	if (rc != 0)
		return rc;
	yaml_event_delete(&ev);
	if ((rc = next(r, &ev, NULL)) != 0)
		return rc;
	if (ev.type != YAML_DOCUMENT_START_EVENT) {
		rc = fail(r, ev.start_mark, NULL, "the document is empty");
		yaml_event_delete(&ev);
		return rc;
	}
	yaml_event_delete(&ev);
	if ((rc = expect(r, &ev, YAML_MAPPING_START_EVENT, NULL, "a mapping of keys")) != 0)
		return rc;
	yaml_event_delete(&ev);
	bool done = false;
	for (size_t guard = 0; !done; guard++) {
		if (guard > NFIELDS)
			return fail(r, r->parser.mark, NULL, "too many keys");
		if ((rc = read_key(r, &done)) != 0)
			return rc;
	}
	if ((rc = expect(r, &ev, YAML_DOCUMENT_END_EVENT, NULL, "the end of the document")) != 0)
		return rc;
	yaml_mark_t end = ev.start_mark;
	yaml_event_delete(&ev);
	if ((rc = expect(r, &ev, YAML_STREAM_END_EVENT, NULL, "one document only")) != 0)
		return rc;
	yaml_event_delete(&ev);
	return cross_check(r, end);
}

int spyre_hw_parse(struct spyre_hw *out, const char *text, size_t len, const char *origin)
{
	if (origin == NULL)
		origin = "<hw>";
	if (text == NULL)
		return err_set(ERR_INVAL, "%s: no text", origin);
	if (len > YAML_DOC_MAX)
		return err_set(ERR_LIMIT,
			       "%s: %zu bytes, more than the %zu a YAML document may have", origin,
			       len, (size_t)YAML_DOC_MAX);
	struct spyre_hw *hw = calloc(1, sizeof(*hw));
	if (hw == NULL)
		return err_set(ERR_NOMEM, "%s: out of memory", origin);
	hw->pe_simd_lanes = 1; /* descriptions written before the calibration: one FMA per PE */
	struct reader r = { .origin = origin, .text = text, .len = len, .hw = hw };
	if (!yaml_parser_initialize(&r.parser)) {
		free(hw);
		return err_set(ERR_NOMEM, "%s: cannot create a YAML parser", origin);
	}
	yaml_parser_set_input_string(&r.parser, (const unsigned char *)text, len);
	yaml_parser_set_encoding(&r.parser, YAML_UTF8_ENCODING);
	int rc = read_document(&r);
	yaml_parser_delete(&r.parser);
	if (rc == 0)
		*out = *hw;
	free(hw);
	return rc;
}

int spyre_hw_load_file(struct spyre_hw *out, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int rc = fs_read_file(&text, &len, path, YAML_DOC_MAX);
	if (rc != 0)
		return err_prefix("hardware description");
	rc = spyre_hw_parse(out, text, len, path);
	free(text);
	return rc;
}

int spyre_hw_load_default(struct spyre_hw *out)
{
	return spyre_hw_parse(out, spyre_hw__default_yaml, spyre_hw__default_yaml_len,
			      "spyre-emu/hw/spyre.yaml (built in)");
}

int spyre_hw_set_cores(struct spyre_hw *hw, int cores)
{
	if (cores < 1 || cores > SPYRE_CORES_MAX)
		return err_set(ERR_INVAL, "cores: %d is not in 1..%d", cores, SPYRE_CORES_MAX);
	hw->cores = cores;
	return 0;
}

double spyre_hw_dev_bytes_per_cycle(const struct spyre_hw *hw)
{
	/* GB/s over Gcycles/s: the 1e9 cancels. */
	return hw->clock_ghz > 0 ? hw->dev_mem_gbps / hw->clock_ghz : 0.0;
}

double spyre_hw_peak_flops_per_cycle(const struct spyre_hw *hw)
{
	/* every PE of every corelet does pe_simd_lanes multiply-adds (2 FLOP each) a cycle */
	return 2.0 * hw->corelets_per_core * hw->pe_rows * hw->pe_cols * hw->pe_simd_lanes;
}

double spyre_hw_peak_tflops(const struct spyre_hw *hw)
{
	return spyre_hw_peak_flops_per_cycle(hw) * hw->cores * hw->clock_ghz / 1000.0;
}

const struct spyre_hw_param *spyre_hw_param_find(const struct spyre_hw *hw, const char *key)
{
	for (size_t i = 0; i < hw->nparams && i < SPYRE_HW_PARAMS_MAX; i++)
		if (strcmp(hw->params[i].key, key) == 0)
			return &hw->params[i];
	return NULL;
}
