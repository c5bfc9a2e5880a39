/* Spec entries at variant granularity (point 10 of testspecs/resolve.h). PyTorch names an
 * instantiated test `<test>_<op.formatted_name>` for @ops, `<test>_<name>_<value>` (or name_fn's
 * text) for @parametrize; torch-spyre decides per instantiated method and its config checker
 * counts an entry as live when it is a collectable test or starts with one plus `_`. So an
 * entry `TestReductions::test_dim_default_mean` speaks for the `mean` variant of
 * `test_dim_default`: when the entries naming the test itself leave it out (an unlisted file
 * mode of skip, say), a variant listed with a run mode still makes the test run. The variant
 * entries of one test are found in each file's sorted plain names from `<method>_` on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "resolve_index.h"

/* Variant entries looked at for one test (a test lists at most its ops times its dtypes). */
#define VARIANTS_MAX 512

struct variant_rule {
	const struct name_rule *rule;
	uint32_t file;
};

/* Whether `method` (a variant entry of the test `test_id` names, whose method is `base_len`
 * bytes) belongs to a longer collectable test: `test_a_b_c` is a variant of `test_a_b` when that
 * is a test, not of `test_a`. */
static bool owned_by_longer(const struct spec_resolve_opts *o, const char *test_id,
			    const char *method, size_t base_len)
{
	if (!o->is_test)
		return false;
	char buf[SPEC_TESTID_MAX];
	const char *last = strrchr(test_id, ':');
	size_t head = last ? (size_t)(last - test_id) + 1 : 0, n = strlen(method);
	if (head + n >= sizeof buf)
		return false;
	memcpy(buf, test_id, head);
	memcpy(buf + head, method, n + 1);
	for (size_t i = n; i > base_len; i--) {
		if (i < n && method[i] != '_')
			continue;
		buf[head + i] = '\0';
		bool hit = o->is_test(o->is_test_ctx, buf) != 0;
		buf[head + i] = method[i];
		if (hit)
			return true;
	}
	return false;
}

/* Every plain rule of the id's files naming a variant of its stem, in file then table order. */
static int collect(const struct spec_resolver *r, const struct spec_test_id *id,
		   const char *test_id, const struct spec_resolve_opts *o, struct variant_rule *out,
		   size_t *n, size_t cap)
{
	char prefix[SPEC_TESTID_MAX + 1];
	size_t sl = strlen(id->stem);
	if (sl + 2 > sizeof prefix || id->dtype[0])
		return 0; /* an instantiated variant already: nothing finer to look at */
	memcpy(prefix, id->stem, sl);
	prefix[sl] = '_';
	prefix[sl + 1] = '\0';
	uint32_t files[64];
	size_t nf = resolve__files_for(r, id, files, 64);
	for (size_t k = 0; k < nf; k++) {
		const struct file_index *fi = &r->files[files[k]];
		for (size_t i = resolve__plain_from(fi, prefix); i < fi->n_plain; i++) {
			const struct name_rule *rule = &fi->rules[fi->plain[i]];
			if (strncmp(rule->method, prefix, sl + 1) != 0)
				break;
			int m = resolve__class_ok(rule, id);
			if (m < 0)
				return m;
			if (!m || (o && owned_by_longer(o, test_id, rule->method, sl)))
				continue;
			if (*n >= cap)
				return err_set(ERR_LIMIT,
					       "resolver: more than %zu variant entries of '%s'",
					       cap, id->stem);
			out[(*n)++] = (struct variant_rule){ rule, files[k] };
		}
	}
	return 0;
}

int testspecs_resolver_variant_names(const struct spec_resolver *r, const char *test_id,
				     const char *device, spec_name_fn fn, void *ctx)
{
	struct spec_test_id *id = malloc(sizeof(*id));
	struct variant_rule *v = malloc(VARIANTS_MAX * sizeof(*v));
	int rc = id && v ? 0 : err_set(ERR_NOMEM, "resolver: variants");
	if (rc == 0)
		rc = testspecs_testid_parse(id, test_id, device);
	size_t n = 0;
	if (rc == 0)
		rc = collect(r, id, test_id, NULL, v, &n, VARIANTS_MAX);
	for (size_t i = 0; rc == 0 && i < n; i++)
		fn(ctx, v[i].rule->name);
	free(id);
	free(v);
	return rc ? rc : (int)n;
}

/* How strongly a mode runs a test: mandatory_success, then xfail_strict, then xfail. */
static int strength(enum spec_mode m)
{
	switch (m) {
	case SPEC_MODE_MANDATORY_SUCCESS:
		return 3;
	case SPEC_MODE_XFAIL_STRICT:
		return 2;
	case SPEC_MODE_XFAIL:
		return 1;
	default:
		return 0;
	}
}

/* The variant's id: the test's id with its method replaced by the variant entry's method. */
static int variant_id(char *buf, size_t size, const char *test_id, const char *method)
{
	const char *last = strrchr(test_id, ':');
	size_t head = last ? (size_t)(last - test_id) + 1 : 0;
	int n = snprintf(buf, size, "%.*s%s", (int)head, test_id, method);
	return n > 0 && (size_t)n < size ? 0 : err_set(ERR_LIMIT, "resolver: variant id too long");
}

/* Op names compare with '.' as '_' (an overload's dot is an underscore in test names). */
static bool op_named(const char *op, const char *suffix)
{
	for (; *op && *suffix; op++, suffix++)
		if ((*op == '.' ? '_' : *op) != *suffix)
			return false;
	return *op == *suffix;
}

/* A caller asking about one op (the case expansion does, op by op) wants that op's variant
 * when there is one; a test whose variants are not ops (@parametrize) keeps them all. */
static bool pinned_elsewhere(const struct spec_resolve_opts *o, const struct variant_rule *v,
			     size_t n, size_t i, size_t stem)
{
	if (!o->ops || o->n_ops != 1)
		return false;
	bool any = false;
	for (size_t k = 0; k < n && !any; k++)
		any = op_named(o->ops[0], v[k].rule->method + stem + 1);
	return any && !op_named(o->ops[0], v[i].rule->method + stem + 1);
}

/* Resolves each variant entry; keeps the strongest eligible decision in `best`. */
static int resolve_each(const struct spec_resolver *r, const char *test_id,
			const struct spec_resolve_opts *o, const struct variant_rule *v, size_t n,
			struct spec_decision *scratch, struct spec_decision *best, size_t *eligible,
			const char **chosen)
{
	struct spec_resolve_opts vo = *o;
	vo.exact = true;
	char vid[SPEC_TESTID_MAX];
	int best_s = 0;
	for (size_t i = 0; i < n; i++) {
		if (pinned_elsewhere(o, v, n, i, strlen(scratch->id.stem)))
			continue;
		int rc = variant_id(vid, sizeof vid, test_id, v[i].rule->method);
		const char *suffix = v[i].rule->method + strlen(scratch->id.stem) + 1;
		/* An @ops test's variant runs that op only. */
		for (size_t k = 0; rc == 0 && o->ops && k < o->n_ops; k++)
			if (op_named(o->ops[k], suffix)) {
				vo.ops = &o->ops[k];
				vo.n_ops = 1;
			}
		if (rc == 0)
			rc = testspecs_resolver_resolve(r, vid, &vo, scratch + 1);
		vo.ops = o->ops;
		vo.n_ops = o->n_ops;
		if (rc)
			return rc;
		if (!scratch[1].eligible)
			continue;
		(*eligible)++;
		if (strength(scratch[1].mode) > best_s) {
			best_s = strength(scratch[1].mode);
			memcpy(best, scratch + 1, sizeof(*best));
			*chosen = v[i].rule->method;
		}
	}
	return 0;
}

/* Appends `s` to the string in buf[size], cut to fit (reasons are read, not parsed). */
static void append(char *buf, size_t size, const char *s)
{
	size_t n = strlen(buf);
	while (*s && n + 1 < size)
		buf[n++] = *s++;
	buf[n] = '\0';
}

int resolve__variants(const struct spec_resolver *r, const char *test_id,
		      const struct spec_resolve_opts *o, struct spec_decision *out)
{
	struct variant_rule v[64], *vv = v;
	size_t n = 0;
	int rc = collect(r, &out->id, test_id, o, vv, &n, 64);
	if (rc == ERR_LIMIT) {
		vv = malloc(VARIANTS_MAX * sizeof(*vv));
		if (!vv)
			return err_set(ERR_NOMEM, "resolver: variants");
		n = 0;
		rc = collect(r, &out->id, test_id, o, vv, &n, VARIANTS_MAX);
	}
	if (rc || n == 0)
		goto done;
	/* scratch[0] keeps the test's parsed id; scratch[1] takes each variant's decision. */
	struct spec_decision *scratch = malloc(3 * sizeof(*scratch));
	if (!scratch) {
		rc = err_set(ERR_NOMEM, "resolver: variant decisions");
		goto done;
	}
	scratch[0].id = out->id;
	size_t eligible = 0;
	const char *chosen = NULL;
	rc = resolve_each(r, test_id, o, vv, n, scratch, &scratch[2], &eligible, &chosen);
	if (rc == 0 && chosen) {
		char why[SPEC_REASON_MAX];
		snprintf(why, sizeof why, "%s", out->reason);
		size_t stem = strlen(out->id.stem);
		memcpy(out, &scratch[2], sizeof(*out));
		out->id = scratch[0].id;
		out->variant = chosen;
		out->variant_suffix = chosen + stem + 1;
		char text[SPEC_REASON_MAX] = "";
		const char *parts[] = {
			"variant ", chosen, ": ", out->reason, "; the test itself: ", why
		};
		for (size_t k = 0; k < sizeof parts / sizeof *parts; k++)
			append(text, sizeof text, parts[k]);
		memcpy(out->reason, text, sizeof text);
	}
	out->n_variants = n;
	out->n_variants_eligible = eligible;
	free(scratch);
done:
	if (vv != v)
		free(vv);
	return rc;
}
