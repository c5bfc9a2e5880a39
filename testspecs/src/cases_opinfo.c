/* Rule 3's cases of one op from what the op database says about it (cases.h): the shapes its
 * OpInfo's sample_inputs_func builds, each given to every tensor input of the emulator's op,
 * at the OpInfo's dtypes (within the op's effective dtypes); the op's default samples at the
 * OpInfo's dtypes when the entry names no readable shapes; the default samples alone when the
 * caller knows no entry. A shape the emulator's op cannot take (a matmul's inner sizes, an
 * empty tensor) is listed unsupported with the emulator's reason, never dropped; so is each
 * shape of an op the emulator lacks (as one input: its arity is the emulator's to know). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases_int.h"
#include "common/err.h"
#include "spyre-emu/ops.h"

const char *testspecs_source_name(enum spec_case_source source)
{
	switch (source) {
	case SPEC_SOURCE_OPINFO_SAMPLES:
		return "OpInfo sample_inputs_func shapes";
	case SPEC_SOURCE_OPINFO_DTYPES:
		return "OpInfo dtypes";
	case SPEC_SOURCE_DEFAULT:
		return "the op's default samples";
	default:
		return "-";
	}
}

/* "float16,bfloat16,complex32": the dtypes the specs know (others cannot be effective). */
static spec_dtype_mask mask_of(const char *list)
{
	spec_dtype_mask m = 0;
	char name[32];
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		enum spec_dtype d;
		if (n < sizeof name) {
			memcpy(name, p, n);
			name[n] = '\0';
			if (testspecs_dtype_parse(name, false, &d) == 0)
				m |= (spec_dtype_mask)1 << d;
		}
		p += n + (p[n] == ',');
	}
	return m;
}

/* One "(5, 10)" at *p (advanced past it and its ';'); false when malformed. */
static bool next_shape(const char **p, int64_t *dims, size_t *nd)
{
	const char *s = *p;
	*nd = 0;
	if (*s != '(')
		return false;
	for (s++; *s && *s != ')';) {
		char *end;
		long long v = strtoll(s, &end, 10);
		if (end == s || v < 0 || v > ((long long)1 << 40) || *nd == SPEC_CASE_DIMS_MAX)
			return false;
		dims[(*nd)++] = v;
		s = end;
		while (*s == ',' || *s == ' ')
			s++;
	}
	if (*s != ')')
		return false;
	s++;
	*p = s + (*s == ';');
	return true;
}

/* Why the emulator's op cannot take `s` (NULL when it can): an empty tensor, or the op's own
 * shape check (spyre_op_output_shape) with its default parameters. */
static const char *shape_misfit(const struct spyre_op_info *info, const struct shapes *s, char *buf,
				size_t size)
{
	struct spyre_tensor in[SPEC_CASE_INPUTS_MAX];
	memset(in, 0, sizeof in);
	for (int i = 0; i < s->nin; i++) {
		in[i].ndim = s->ndims[i];
		for (int j = 0; j < s->ndims[i]; j++) {
			if (s->v[i][j] == 0)
				return "an empty tensor (a zero dimension): the emulator runs none";
			in[i].shape[j] = s->v[i][j];
		}
	}
	struct spyre_op_params p;
	memset(&p, 0, sizeof p);
	p.dim = -1; /* spyre_run_opts_init's defaults */
	p.perm[1] = 1;
	int64_t out[SPYRE_DIMS_MAX];
	int nd;
	if (spyre_op_output_shape(info, in, s->nin, &p, out, &nd) == 0)
		return NULL;
	snprintf(buf, size, "the OpInfo shape does not fit the emulator's %s: %s", info->name,
		 err_last());
	return buf;
}

static int add_sample_shapes(struct ctx *c, const char *op, const struct op_view *v,
			     const struct spyre_op_info *info, const char *text,
			     struct spec_loc loc)
{
	char why[160];
	const char *p = text;
	for (int n = 0; *p && n < SPEC_OPINFO_SHAPES_MAX; n++) {
		int64_t dims[SPEC_CASE_DIMS_MAX];
		size_t nd;
		if (!next_shape(&p, dims, &nd))
			return 0; /* the rest is not a shape list: what was read stands */
		struct shapes s = { 0 };
		for (int i = 0; i < (info ? info->nin : 1) && i < SPEC_CASE_INPUTS_MAX; i++)
			testspecs__put_shape(&s, dims, nd);
		c->shape_why = s.too_big || !info ? NULL : shape_misfit(info, &s, why, sizeof why);
		int rc = testspecs__add_crossed(c, op, v, &s, SPEC_DTYPE_NONE, SPEC_RULE_OPINFO,
						NULL, loc);
		c->shape_why = NULL;
		if (rc)
			return rc;
	}
	return 0;
}

int testspecs__add_opinfo_cases(struct ctx *c, const char *op, const struct op_view *v,
				struct spec_loc loc)
{
	struct spec_opinfo oi;
	memset(&oi, 0, sizeof oi);
	bool found = c->t->opinfo_of && c->t->opinfo_of(c->t->opinfo_ctx, op, &oi) == 1;
	const struct spec_op_map *m = testspecs_opmap_find(op);
	const struct spyre_op_info *info = m ? spyre_op_find(m->emu) : NULL;
	c->has_opinfo_dtypes = found && oi.dtypes;
	c->opinfo_dtypes = c->has_opinfo_dtypes ? mask_of(oi.dtypes) : 0;
	c->oi = found ? &oi : NULL;
	int rc;
	if (found && oi.shapes && (!info || info->nin >= 1)) {
		c->source = SPEC_SOURCE_OPINFO_SAMPLES;
		rc = add_sample_shapes(c, op, v, info, oi.shapes, loc);
	} else {
		c->source = c->has_opinfo_dtypes ? SPEC_SOURCE_OPINFO_DTYPES : SPEC_SOURCE_DEFAULT;
		rc = testspecs__add_default_samples(c, op, v, SPEC_RULE_OPINFO, loc);
	}
	c->source = SPEC_SOURCE_NONE;
	c->has_opinfo_dtypes = false;
	c->opinfo_dtypes = 0;
	c->oi = NULL;
	return rc;
}
