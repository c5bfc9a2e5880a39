/* `spyre-ci specs`: torch-spyre's test-suite YAML for spec authors: `lint` checks files the way
 * the loader and the resolver read them, `list` shows the kernel cases the files give, and
 * `explain` shows the decision for one upstream test id and the entries that made it. The
 * command line, loading, lint, explain and the help live here; list in specs_list.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "common/err.h"
#include "funnel/funnel.h"
#include "selector/catalog.h"
#include "selector/select.h"
#include "specs_cmd.h"
#include "spyre-emu/graph.h"
#include "testspecs/lint_upstream.h"

static const struct cli_command *self(void)
{
	return cli_find("specs");
}

/* ---- the command line ---- */

static int push(const char **v, size_t *n, const char *s, const char *what)
{
	if (*n >= SPECS_ARGS_MAX)
		return err_set(ERR_LIMIT, "more than %d %s", SPECS_ARGS_MAX, what);
	v[(*n)++] = s;
	return 0;
}

static int parse_action(struct specs_args *a, const char *s)
{
	if (strcmp(s, "lint") == 0)
		a->action = SPECS_LINT;
	else if (strcmp(s, "list") == 0)
		a->action = SPECS_LIST;
	else if (strcmp(s, "explain") == 0)
		a->action = SPECS_EXPLAIN;
	else
		return err_set(ERR_INVAL, "unknown action '%s' (expected lint, list or explain)",
			       s);
	return 0;
}

/* Which actions an option fits, as a bit set over enum specs_action. */
#define FITS(x) (1u << (x))

static int fits(const struct specs_args *a, const char *opt, unsigned mask)
{
	if (mask & FITS(a->action))
		return 0;
	return err_set(ERR_INVAL, "%s does not fit this action (see the actions' options)", opt);
}

/* One option with a value; 1 when `opt` was one, 0 when not, negative on error. */
static int option_value(struct specs_args *a, const char *opt, const char *val)
{
	int rc;
	if (strcmp(opt, "--label") == 0) {
		rc = fits(a, opt, FITS(SPECS_LIST) | FITS(SPECS_EXPLAIN));
		a->label = val;
	} else if (strcmp(opt, "--test") == 0) {
		rc = fits(a, opt, FITS(SPECS_LIST) | FITS(SPECS_EXPLAIN));
		if (!rc)
			rc = push(a->tests, &a->n_tests, val, "--test values");
	} else if (strcmp(opt, "--op") == 0) {
		rc = fits(a, opt, FITS(SPECS_EXPLAIN));
		if (!rc)
			rc = push(a->ops, &a->n_ops, val, "--op values");
	} else if (strcmp(opt, "--dtype") == 0) {
		enum spec_dtype d;
		rc = fits(a, opt, FITS(SPECS_EXPLAIN));
		if (!rc && testspecs_dtype_parse(val, false, &d) != 0)
			rc =
			    err_set(ERR_INVAL, "--dtype '%s': not a dtype of the spec format", val);
		if (!rc)
			a->dtypes |= (spec_dtype_mask)1 << d;
	} else if (strcmp(opt, "--torch-root") == 0) {
		a->roots.torch_root = val;
		rc = 0;
	} else if (strcmp(opt, "--device-root") == 0) {
		a->roots.torch_device_root = val;
		rc = 0;
	} else if (strcmp(opt, "--upstream") == 0) {
		rc = fits(a, opt, FITS(SPECS_LINT) | FITS(SPECS_LIST) | FITS(SPECS_EXPLAIN));
		a->upstream = val;
	} else if (strcmp(opt, "--rev") == 0) {
		rc = fits(a, opt, FITS(SPECS_LIST) | FITS(SPECS_EXPLAIN));
		a->rev = val;
	} else if (strcmp(opt, "--cache") == 0) {
		rc = fits(a, opt, FITS(SPECS_LIST) | FITS(SPECS_EXPLAIN));
		a->cache = val;
	} else {
		return 0;
	}
	return rc ? rc : 1;
}

static int parse_option(struct specs_args *a, int argc, char **argv, int *i)
{
	const char *opt = argv[*i];
	if (strcmp(opt, "--json") == 0) {
		a->json = true;
		return fits(a, opt, FITS(SPECS_LIST) | FITS(SPECS_EXPLAIN));
	}
	if (strcmp(opt, "--strict") == 0) {
		a->strict = true;
		return fits(a, opt, FITS(SPECS_LINT));
	}
	static const char *const valued[] = { "--label",    "--test",       "--op",
					      "--dtype",    "--torch-root", "--device-root",
					      "--upstream", "--rev",        "--cache" };
	bool known = false;
	for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++)
		known = known || strcmp(opt, valued[k]) == 0;
	if (!known)
		return err_set(ERR_INVAL, "unknown option '%s'", opt);
	if (*i + 1 >= argc || argv[*i + 1][0] == '\0')
		return err_set(ERR_INVAL, "%s needs a value", opt);
	int rc = option_value(a, opt, argv[++*i]);
	return rc < 0 ? rc : 0;
}

static int specs_args_parse(struct specs_args *a, int argc, char **argv)
{
	memset(a, 0, sizeof(*a));
	a->roots.torch_root = getenv("TORCH_ROOT");
	a->roots.torch_device_root = getenv("TORCH_DEVICE_ROOT");
	if (argc < 2)
		return err_set(ERR_INVAL, "an action is missing (lint, list or explain)");
	int rc = parse_action(a, argv[1]);
	for (int i = 2; rc == 0 && i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			for (i++; rc == 0 && i < argc; i++)
				rc = push(a->paths, &a->n_paths, argv[i], "paths");
			break;
		}
		if (argv[i][0] == '-' && argv[i][1] != '\0')
			rc = parse_option(a, argc, argv, &i);
		else
			rc = push(a->paths, &a->n_paths, argv[i], "paths");
	}
	if (rc)
		return rc;
	for (const char **r = &a->roots.torch_root; r <= &a->roots.torch_device_root; r++)
		if (*r && !**r)
			*r = NULL; /* an empty variable is unset */
	a->has_roots = a->roots.torch_root || a->roots.torch_device_root;
	if (a->n_paths == 0)
		return err_set(ERR_INVAL, "no spec FILE or DIR given");
	for (size_t i = 0; i < a->n_paths; i++) { /* "specs/" names its files "specs/x.yaml" */
		char *p = (char *)a->paths[i];    /* argv's own storage */
		for (size_t n = strlen(p); n > 1 && p[n - 1] == '/'; n--)
			p[n - 1] = '\0';
	}
	if ((a->rev || a->cache) && !a->upstream)
		return err_set(ERR_INVAL, "%s goes with --upstream DIR, which is missing",
			       a->rev ? "--rev" : "--cache");
	if (a->action == SPECS_EXPLAIN && a->n_tests != 1)
		return err_set(ERR_INVAL, "explain takes exactly one --test ID (got %zu)",
			       a->n_tests);
	return 0;
}

/* ---- shared with specs_list.c ---- */

int specs_load(struct spec_set **out, const struct specs_args *a, bool strict,
	       struct spec_diag_list *diags)
{
	int rc = testspecs_set_create(out);
	if (rc)
		return rc;
	struct spec_load_opts o = { .strict = strict,
				    .roots = a->has_roots ? &a->roots : NULL,
				    .diags = diags };
	int worst = 0;
	for (size_t i = 0; i < a->n_paths; i++) {
		rc = testspecs_load_path(*out, a->paths[i], &o);
		if (rc == ERR_INVAL) {
			worst = worst ? worst : ERR_INVAL;
		} else if (rc) {
			testspecs_set_destroy(*out);
			*out = NULL;
			return err_prefix("%s", a->paths[i]);
		}
	}
	return worst;
}

void specs_print_diags(FILE *out, const struct spec_diag_list *d, bool as_errors)
{
	for (size_t i = 0; i < d->n; i++) {
		struct spec_diag copy = d->v[i];
		if (as_errors)
			copy.severity = SPEC_ERROR;
		char line[2048];
		testspecs_diag_format(&copy, line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
}

const char *specs_id_path(const struct spec_file *f)
{
	static const char tok[] = "${TORCH_ROOT}/";
	const char *p = f->path.s;
	return strncmp(p, tok, sizeof(tok) - 1) == 0 ? p + sizeof(tok) - 1 : p;
}

int specs_expand_id(struct spec_case_list *list, const struct spec_resolver *r,
		    const struct spec_set *set, const char *test_id, const char *tier,
		    const struct catalog *cat, struct spec_expand_result *res)
{
	struct spec_decision *d = malloc(sizeof(*d));
	if (!d)
		return err_set(ERR_NOMEM, "explain: out of memory");
	struct spec_resolve_opts o = { .tier = tier };
	int rc = testspecs_resolver_resolve(r, test_id, &o, d);
	struct selector_case_test x;
	if (!rc)
		rc = selector_case_test_init(&x, test_id, cat, NULL, d, &o);
	free(d);
	if (!rc) {
		rc = testspecs_cases_expand(list, r, set, &x.ct, res);
		selector_case_test_finish(&x);
	}
	return rc;
}

static json_t *dims_json(const int64_t *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; a && i < n; i++)
		jx_append_new(a, json_integer(v[i]));
	return a;
}

json_t *specs_case_json(const struct spec_case *c)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	jx_set_str(o, "id", c->id);
	jx_set_str(o, "test", c->test_id);
	jx_set_str(o, "op", c->op);
	if (c->emu_op)
		jx_set_str(o, "emu_op", c->emu_op);
	json_t *shapes = json_array();
	for (int i = 0; shapes && i < c->nin; i++)
		jx_append_new(shapes, dims_json(c->shapes[i], c->ndims[i]));
	jx_set_new(o, "shapes", shapes);
	jx_set_str(o, "dtype", c->dtype ? testspecs_dtype_name(c->dtype) : "none");
	jx_set_real(o, "atol", c->atol);
	jx_set_real(o, "rtol", c->rtol);
	jx_set_str(o, "mode", testspecs_mode_name(c->mode));
	if (c->seed <= INT64_MAX) {
		jx_set_int(o, "seed", (int64_t)c->seed);
	} else { /* only a `kernels:` seed can be this large */
		char seed[24];
		snprintf(seed, sizeof(seed), "%" PRIu64, c->seed);
		jx_set_str(o, "seed", seed);
	}
	jx_set_str(o, "rule", testspecs_rule_name(c->rule));
	if (c->source != SPEC_SOURCE_NONE)
		jx_set_str(o, "source", testspecs_source_name(c->source));
	char at[1024];
	snprintf(at, sizeof(at), "%s:%u:%u", c->loc.file ? c->loc.file : "?", c->loc.line,
		 c->loc.col);
	jx_set_str(o, "at", at);
	if (c->unsupported)
		jx_set_str(o, "why", c->why);
	jx_set_str(o, "kind", c->kind == SPEC_CASE_GRAPH ? "graph" : "op");
	if (c->kind == SPEC_CASE_GRAPH) { /* as written, the file it names, how it runs */
		jx_set_str(o, "graph", c->kernel->graph.s);
		jx_set_str(o, "graph_file", c->kernel->graph_path);
		jx_set_int(o, "graph_ops", c->kernel->g->nops);
		jx_set_int(o, "cores", c->kernel->cores);
		jx_set_str(o, "relayout", testspecs_relayout_name(c->kernel->relayout));
	}
	return o;
}

/* ---- lint ---- */

/* The resolver's regex check, its messages worded for spec authors: "bad regular expression
 * 'test_[z-a]': range out of order ..." (the resolver says "regex '...': ..."). */
static void lint_name(void *ctx, const struct spec_str *name, const char *doc_path,
		      struct spec_diag_list *diags)
{
	struct spec_diag_list mine;
	testspecs_diags_init(&mine);
	testspecs_resolve_lint_name(ctx, name, doc_path, &mine);
	for (size_t i = 0; i < mine.n; i++) {
		const struct spec_diag *d = &mine.v[i];
		const char *m = d->message;
		struct spec_loc loc = { d->file, d->line, d->col };
		testspecs_diags_add(diags, d->severity, &loc, d->path, "bad regular expression %s",
				    strncmp(m, "regex ", 6) == 0 ? m + 6 : m);
	}
	testspecs_diags_finish(&mine);
}

static int cmd_lint(const struct specs_args *a)
{
	struct spec_diag_list diags;
	testspecs_diags_init(&diags);
	struct spec_set *set = NULL;
	int rc = specs_load(&set, a, a->strict, &diags);
	if (rc && rc != ERR_INVAL) {
		fprintf(stderr, "spyre-ci specs lint: %s\n", err_last());
		testspecs_diags_finish(&diags);
		return CLI_USAGE;
	}
	struct spec_lint_hooks hooks = { lint_name, NULL };
	int lrc = testspecs_lint_hooks(set, &hooks, &diags);
	struct spec_upstream_counts up = { 0 };
	if (lrc >= 0 && a->upstream && specs_lint_upstream(a, &diags, &up) < 0) {
		fprintf(stderr, "spyre-ci specs lint: %s\n",
			err_last()); /* no checkout: bad input */
		testspecs_diags_finish(&diags);
		testspecs_set_destroy(set);
		return CLI_USAGE;
	}
	if (lrc < 0) {
		fprintf(stderr, "spyre-ci specs lint: %s\n", err_last());
		rc = CLI_FAILED;
	} else {
		specs_print_diags(stdout, &diags, a->strict);
		if (a->upstream)
			printf("upstream %s: %zu collectable tests; %zu names, %zu live, %zu dead; "
			       "%zu decided by more than one config; %zu not covered\n",
			       a->upstream, up.tests, up.names, up.live, up.dead, up.duplicates,
			       up.uncovered);
		bool bad = diags.n_errors > 0 || (a->strict && diags.n_warnings > 0);
		rc = bad ? CLI_USAGE : CLI_OK;
	}
	testspecs_diags_finish(&diags);
	testspecs_set_destroy(set);
	return rc;
}

/* ---- explain ---- */

static json_t *dtypes_json(spec_dtype_mask m)
{
	json_t *a = json_array();
	for (int d = 1; a && d < SPEC_DTYPE_COUNT; d++)
		if (m & ((spec_dtype_mask)1 << d))
			jx_append_new(a, json_string(testspecs_dtype_name((enum spec_dtype)d)));
	return a;
}

static json_t *strs_json(const struct spec_strs *s)
{
	json_t *a = json_array();
	for (size_t i = 0; a && s && i < s->n; i++)
		jx_append_new(a, json_string(s->v[i].s));
	return a;
}

static json_t *op_json(const struct spec_decision_op *op)
{
	json_t *o = json_object(), *modes = json_object(), *prec = json_object();
	jx_set_str(o, "name", op->name);
	jx_set_new(o, "dtypes", dtypes_json(op->dtypes));
	for (int d = 1; d < SPEC_DTYPE_COUNT; d++) {
		if (!(op->dtypes & ((spec_dtype_mask)1 << d)))
			continue;
		const char *dn = testspecs_dtype_name((enum spec_dtype)d);
		jx_set_str(modes, dn, testspecs_mode_name(op->mode[d]));
		const struct spec_precision *p = &op->precision[d];
		if (!p->present)
			continue;
		json_t *pj = json_object();
		if (p->has_atol)
			jx_set_real(pj, "atol", p->atol);
		if (p->has_rtol)
			jx_set_real(pj, "rtol", p->rtol);
		jx_set_new(prec, dn, pj);
	}
	jx_set_new(o, "modes", modes);
	jx_set_new(o, "precision", prec);
	return o;
}

static json_t *decision_json(const struct spec_decision *d, const char *test_id)
{
	json_t *o = json_object();
	jx_set_str(o, "test", test_id);
	jx_set_bool(o, "eligible", d->eligible);
	jx_set_str(o, "mode", testspecs_mode_name(d->mode));
	jx_set_bool(o, "listed", d->listed);
	jx_set_new(o, "dtypes", dtypes_json(d->dtypes));
	jx_set_bool(o, "dtypes_unbounded", d->dtypes_unbounded);
	json_t *ops = json_array();
	for (size_t i = 0; i < d->n_ops; i++)
		jx_append_new(ops, op_json(&d->ops[i]));
	jx_set_new(o, "ops", ops);
	jx_set_bool(o, "ops_unbounded", d->ops_unbounded);
	if (d->op_buf[0])
		jx_set_str(o, "variant_op", d->op_buf);
	if (d->id.dtype[0])
		jx_set_str(o, "variant_dtype", d->id.dtype);
	jx_set_new(o, "tags", strs_json(d->tags));
	jx_set_new(o, "labels", strs_json(d->labels));
	json_t *entries = json_array();
	for (size_t i = 0; i < d->n_entries; i++) {
		const struct spec_decision_entry *e = &d->entries[i];
		json_t *ej = json_object();
		jx_set_str(ej, "file", e->loc.file ? e->loc.file : "?");
		jx_set_int(ej, "line", e->loc.line);
		jx_set_int(ej, "col", e->loc.col);
		jx_set_str(ej, "role", testspecs_role_name(e->role));
		jx_set_str(ej, "what", e->what ? e->what : "");
		jx_append_new(entries, ej);
	}
	jx_set_new(o, "entries", entries);
	jx_set_str(o, "reason", d->reason);
	return o;
}

static void print_mask(spec_dtype_mask m, bool unbounded)
{
	if (unbounded) {
		printf("any (no list bounds them)");
		return;
	}
	int n = 0;
	for (int d = 1; d < SPEC_DTYPE_COUNT; d++)
		if (m & ((spec_dtype_mask)1 << d))
			printf("%s%s", n++ ? ", " : "", testspecs_dtype_name((enum spec_dtype)d));
	if (!n)
		printf("none");
}

/* --upstream: which revision, and whether the test is one of its tests. */
static void upstream_text(const struct specs_args *a, const struct funnel_expansion *x)
{
	printf("upstream  %s at %s (commit %.12s)%s\n", a->upstream, a->rev ? a->rev : "HEAD",
	       x->catalog->commit_id,
	       x->n_absent ? ": no such test there; the cases come from the specs and its op "
			     "database alone"
			   : "");
}

static json_t *upstream_json(const struct specs_args *a, const struct funnel_expansion *x)
{
	json_t *o = json_object();
	jx_set_str(o, "dir", a->upstream);
	jx_set_str(o, "rev", a->rev ? a->rev : "HEAD");
	jx_set_str(o, "commit", x->catalog->commit_id);
	jx_set_bool(o, "has_test", x->n_absent == 0);
	return o;
}

static void explain_text(const struct specs_args *a, const struct spec_decision *d,
			 const struct spec_case_list *l, const struct spec_expand_result *res,
			 const struct funnel_expansion *x)
{
	const struct catalog *cat = x ? x->catalog : NULL;
	printf("test      %s\n", a->tests[0]);
	if (x)
		upstream_text(a, x);
	printf("eligible  %s\nmode      %s\n", d->eligible ? "yes" : "no",
	       testspecs_mode_name(d->mode));
	printf("reason    %s\n", d->reason[0] ? d->reason : "-");
	printf("dtypes    ");
	print_mask(d->dtypes, d->dtypes_unbounded);
	printf("\nops       ");
	if (d->ops_unbounded)
		printf("any (no supported_ops)");
	for (size_t i = 0; i < d->n_ops; i++)
		printf("%s%s", i ? ", " : "", d->ops[i].name);
	printf("\nentries\n");
	for (size_t i = 0; i < d->n_entries; i++) {
		const struct spec_decision_entry *e = &d->entries[i];
		printf("  %s:%u:%u  %-13s %s\n", e->loc.file ? e->loc.file : "?", e->loc.line,
		       e->loc.col, testspecs_role_name(e->role), e->what ? e->what : "");
	}
	printf("cases     %zu (%zu unsupported), rule %s%s%s\n", res->n_cases, res->n_unsupported,
	       testspecs_rule_name(res->rule), res->why ? ": " : "", res->why ? res->why : "");
	specs_explain_sources(stdout, l, res, cat);
	for (size_t i = 0; i < l->n; i++) {
		const struct spec_case *c = &l->v[i];
		printf("  %s %-20s %-9s %s%s", c->id, c->op,
		       c->dtype ? testspecs_dtype_name(c->dtype) : "none",
		       testspecs_mode_name(c->mode), c->unsupported ? "  (unsupported)" : "");
		if (c->kind == SPEC_CASE_GRAPH)
			printf("  graph %s (%d ops, relayout %s)", c->kernel->graph_path,
			       c->kernel->g->nops, testspecs_relayout_name(c->kernel->relayout));
		printf("\n");
	}
}

/* `x`: the funnel's expansion with --upstream, else NULL. */
static int explain_print(const struct specs_args *a, const struct spec_decision *d,
			 const struct spec_case_list *l, const struct spec_expand_result *res,
			 const struct funnel_expansion *x)
{
	if (!a->json) {
		explain_text(a, d, l, res, x);
		return CLI_OK;
	}
	json_t *o = decision_json(d, a->tests[0]);
	if (x)
		jx_set_new(o, "upstream", upstream_json(a, x));
	json_t *cases = json_array();
	for (size_t i = 0; i < l->n; i++)
		jx_append_new(cases, specs_case_json(&l->v[i]));
	jx_set_new(o, "cases", cases);
	jx_set_str(o, "rule", testspecs_rule_name(res->rule));
	json_t *src = json_object();
	for (int k = 1; k < SPEC_SOURCE_COUNT; k++)
		if (res->n_by_source[k])
			jx_set_int(src, testspecs_source_name((enum spec_case_source)k),
				   (int64_t)res->n_by_source[k]);
	jx_set_new(o, "case_sources", src);
	if (res->why)
		jx_set_str(o, "cases_why", res->why);
	return cli_print_json(o);
}

/* Without --upstream: the specs alone (every @ops guess theirs, default samples). */
static int cmd_explain(const struct specs_args *a, const struct spec_set *set)
{
	struct spec_resolver *r;
	if (testspecs_resolver_create(&r, set) != 0) {
		fprintf(stderr, "spyre-ci specs explain: %s\n", err_last());
		return CLI_USAGE;
	}
	struct spec_decision *d = malloc(sizeof(*d));
	struct spec_resolve_opts o = { .tier = a->label,
				       .dtypes = a->dtypes,
				       .ops = a->n_ops ? a->ops : NULL,
				       .n_ops = a->n_ops };
	struct spec_case_list l;
	testspecs_cases_init(&l);
	struct spec_expand_result res = { 0 };
	int rc = d ? testspecs_resolver_resolve(r, a->tests[0], &o, d)
		   : err_set(ERR_NOMEM, "explain: out of memory");
	if (!rc)
		rc = specs_expand_id(&l, r, set, a->tests[0], a->label, NULL, &res);
	if (rc)
		fprintf(stderr, "spyre-ci specs explain: %s\n", err_last());
	int out = rc == ERR_INVAL ? CLI_USAGE
		  : rc            ? CLI_FAILED
				  : explain_print(a, d, &l, &res, NULL);
	testspecs_cases_finish(&l);
	free(d);
	testspecs_resolver_destroy(r);
	return out;
}

/* Stage 3's outcome for a test as an expansion's result, for the printers. */
static void result_of(const struct select_test *t, struct spec_expand_result *res)
{
	memset(res, 0, sizeof *res);
	res->eligible = t->fate >= SELECT_ELIGIBLE;
	res->mode = t->mode;
	res->n_cases = t->kernel_cases;
	res->n_unsupported = t->kernel_unsupported;
	memcpy(res->n_by_source, t->kernel_by_source, sizeof res->n_by_source);
	for (int k = SPEC_RULE_NONE; k <= SPEC_RULE_BODY_OPS; k++)
		if (t->case_rule && strcmp(t->case_rule, testspecs_rule_name(k)) == 0)
			res->rule = (enum spec_case_rule)k;
	res->why = t->case_why ? t->case_why : res->eligible ? NULL : t->spec_why;
}

/* With --upstream: the test of a->rev taken through the funnel's stage 3 (the cases `select`
 * gives it), its decision resolved as stage 3 resolves it (the revision's tests for the variant
 * rule). An id the revision has no test of is expanded from the specs and the revision's op
 * database, and the output says so. */
static int explain_upstream(const struct specs_args *a)
{
	struct funnel_specs *specs = NULL;
	struct funnel_expansion x = { 0 };
	selector_report_init(&x.rep);
	struct spec_decision *d = malloc(sizeof(*d));
	struct spec_case_list own;
	testspecs_cases_init(&own);
	struct spec_expand_result res = { 0 };
	int rc = d ? specs_load_upstream(&specs, a) : err_set(ERR_NOMEM, "explain: out of memory");
	if (!rc)
		rc = specs_expand_upstream(&x, a, specs, a->tests, 1);
	struct spec_resolve_opts o = { .tier = a->label,
				       .dtypes = a->dtypes,
				       .ops = a->n_ops ? a->ops : NULL,
				       .n_ops = a->n_ops,
				       .is_test = funnel_expansion_is_test,
				       .is_test_ctx = &x };
	if (!rc)
		rc = testspecs_resolver_resolve(specs->resolver, a->tests[0], &o, d);
	const struct spec_case_list *l = &x.rep.cases;
	if (!rc && x.n_absent) {
		l = &own;
		rc = specs_expand_id(&own, specs->resolver, specs->set, a->tests[0], a->label,
				     x.catalog, &res);
	} else if (!rc) {
		result_of(&x.rep.tests[0], &res);
	}
	if (rc)
		fprintf(stderr, "spyre-ci specs explain: %s\n", err_last());
	int out = rc == ERR_INVAL || rc == ERR_NOTFOUND ? CLI_USAGE
		  : rc                                  ? CLI_FAILED
							: explain_print(a, d, l, &res, &x);
	testspecs_cases_finish(&own);
	funnel_expansion_finish(&x);
	funnel_specs_destroy(specs);
	free(d);
	return out;
}

/* ---- the subcommand ---- */

int cmd_specs_main(int argc, char **argv)
{
	struct specs_args a;
	if (specs_args_parse(&a, argc, argv) != 0)
		return cli_usage_error(self(), "%s", err_last());
	if (a.action == SPECS_LINT)
		return cmd_lint(&a);
	if (a.action == SPECS_LIST)
		return specs_list_run(&a);
	if (a.upstream)
		return explain_upstream(&a);
	struct spec_diag_list diags;
	testspecs_diags_init(&diags);
	struct spec_set *set = NULL;
	int rc = specs_load(&set, &a, false, &diags);
	if (rc) {
		specs_print_diags(stderr, &diags, false);
		if (rc != ERR_INVAL)
			fprintf(stderr, "spyre-ci specs explain: %s\n", err_last());
		else
			fprintf(stderr, "spyre-ci specs explain: the specs have errors "
					"(`spyre-ci specs lint` lists them)\n");
	} else {
		rc = cmd_explain(&a, set);
	}
	testspecs_diags_finish(&diags);
	testspecs_set_destroy(set);
	return rc < 0 ? CLI_USAGE : rc;
}

const char cmd_specs_summary[] =
    "torch-spyre's test-suite YAML: lint spec files, list their kernel cases, explain a test";

const char cmd_specs_help[] =
    "Usage: spyre-ci specs ACTION [OPTIONS] FILE|DIR...\n"
    "\n"
    "Reads torch-spyre's test-suite YAML (test_suite_config) exactly as torch-spyre's loader\n"
    "does. A DIR stands for its *.yaml and *.yml files, sorted by name; several files and\n"
    "dirs merge as torch-spyre merges them (docs/specs.md).\n"
    "\n"
    "Actions:\n"
    "  lint [--strict] [--upstream DIR] FILE|DIR...\n"
    "      checks every file: the schema, YAML itself, paths, regular expressions of test\n"
    "      names (Python re syntax), dtype and op names across files. Prints one line per\n"
    "      problem to stdout:\n"
    "        file:line:col: error|warning: message (at test_suite_config.files[0].tests[1].mode)\n"
    "      --strict: unknown keys are errors, and so is every warning.\n"
    "      --upstream DIR: also torch-spyre's config checker against the collectable tests\n"
    "      of DIR's HEAD (a git work tree; generated tests included), each file a config of\n"
    "      its own: dead names (no test, nor a test's name plus '_': a variant), tests\n"
    "      decided by more than one config, tests of a listed file no config names; then\n"
    "      one summary line.\n"
    "  list FILE|DIR... [--label L] [--test ID ...] [--json]\n"
    "       [--upstream DIR [--rev REV] [--cache CDIR]]\n"
    "      the kernel cases the specs give. Every plain name of an entry is the test\n"
    "      PATH::NAME (PATH relative to TORCH_ROOT), resolved and expanded into cases\n"
    "      (op, input shapes, dtype, atol, rtol, mode, seed); a regular-expression name (or an\n"
    "      entry of a glob path) names no concrete test without an upstream checkout: it is\n"
    "      listed as a pattern with its mode and the cases its kernels: or\n"
    "      sample_inputs_func give. Unsupported cases are listed with the reason, tests that\n"
    "      give no case as not mappable, tests the specs refuse as not eligible.\n"
    "      --label L: only entries of tier L. --test ID: those ids instead of the entries.\n"
    "      --upstream DIR: the tests are DIR's (a git work tree of PyTorch, or a generated\n"
    "      one; ${TORCH_ROOT} is DIR), each with exactly the cases `select` and `run` give\n"
    "      it: an @ops test's list is evaluated to its ops, and their shapes and dtypes come\n"
    "      from DIR's op database. Listed are the tests an entry names (by name, pattern or\n"
    "      variant) and the tests that get cases by their file's unlisted_test_mode; then\n"
    "      the spec names no test of DIR matches (not in the upstream). Without it, @ops\n"
    "      tests are guessed from the specs and get the ops' default samples.\n"
    "      --rev REV: DIR's revision (branch, tag, id; default HEAD). --cache CDIR: keep\n"
    "      the files read from DIR in CDIR, keyed by blob id, as `select --cache` does (the\n"
    "      next run reads only what changed).\n"
    "      JSON: {\"cases\": [{id, test, op, shapes, dtype, atol, rtol, mode, seed, rule, at}],\n"
    "      \"unsupported\": [... + why], \"not_mappable\": [{test, mode, reason}],\n"
    "      \"not_eligible\": [...], \"patterns\": [{pattern, at, mode, eligible, rule, cases}],\n"
    "      \"summary\": {tests, cases, unsupported}}; with --upstream also \"upstream\": {dir,\n"
    "      rev, commit, tests} and \"not_in_upstream\": [{name, at}].\n"
    "  explain --test ID FILE|DIR... [--label L] [--dtype D ...] [--op OP ...]\n"
    "          [--upstream DIR [--rev REV] [--cache CDIR]] [--json]\n"
    "      the decision for one upstream test id (path::Class::method, Class::method, or a\n"
    "      device-generic name such as TestFooPRIVATEUSE1::test_bar_add_spyre_float16):\n"
    "      eligible, mode, effective dtypes, ops with their dtypes, modes and precision, and\n"
    "      the entries (file:line:col and role: file, entry, shadowed, label-dropped, dtype,\n"
    "      op) that made it, then the test's kernel cases.\n"
    "      --dtype D: the test's own dtypes (its @ops allowed dtypes), repeatable.\n"
    "      --op OP: the test's ops (its @ops list), repeatable.\n"
    "      --upstream DIR [--rev REV]: the test of DIR's revision REV (default HEAD) gets the\n"
    "      cases `select` gives it: DIR says whether the test is @ops and which ops its list\n"
    "      runs, and each op's cases come from its OpInfo entry there (its sample_inputs_func\n"
    "      shapes, its dtypes), else the op's default samples; each case and the summary say\n"
    "      which. An id DIR has no test of is said so, its cases from the specs alone.\n"
    "      JSON keys: test, eligible, mode, listed, dtypes, dtypes_unbounded, ops [{name,\n"
    "      dtypes, modes, precision}], ops_unbounded, tags, labels, entries [{file, line, col,\n"
    "      role, what}], reason, cases, rule, case_sources.\n"
    "\n"
    "Options for every action:\n"
    "  --torch-root DIR    the value of ${TORCH_ROOT} in paths (default: $TORCH_ROOT)\n"
    "  --device-root DIR   the value of ${TORCH_DEVICE_ROOT} (default: $TORCH_DEVICE_ROOT)\n"
    "  With neither set, paths stay as written and test ids match them by their tokens;\n"
    "  with either set, paths are resolved and one that leaves its root is an error.\n"
    "\n"
    "Exit codes: 0 ok (lint: no error; warnings alone pass unless --strict); 2 lint found an\n"
    "error, a file does not load (list, explain: the messages go to stderr), a test id does\n"
    "not parse, or bad usage (an unknown action or option, an option the action does not\n"
    "take, a missing value or FILE|DIR, explain without exactly one --test); 1 an internal\n"
    "failure (out of memory).\n"
    "\n"
    "Examples (from the repository's root):\n"
    "  spyre-ci specs lint --strict testspecs/specs/\n"
    "  spyre-ci specs list testspecs/specs/ --label smoke\n"
    "  spyre-ci specs list testspecs/specs/linalg.yaml --json\n"
    "  spyre-ci fixture upstream --out /tmp/up --seed 1\n"
    "  spyre-ci specs list --upstream /tmp/up /tmp/up/spyre/specs\n"
    "  spyre-ci specs list --upstream /tmp/up --rev HEAD~1 --json /tmp/up/spyre/specs \\\n"
    "      --test test/inductor/test_nn_40.py::TestNn40::test_pad_2\n"
    "  spyre-ci specs explain --upstream /tmp/up /tmp/up/spyre/specs \\\n"
    "      --test test/inductor/test_nn_40.py::TestNn40::test_pad_2\n"
    "  spyre-ci specs explain --test test/test_binary_ufuncs.py::TestBinaryUfuncs::test_add \\\n"
    "      testspecs/specs/\n"
    "  spyre-ci specs explain --test \\\n"
    "      "
    "test/"
    "test_binary_ufuncs.py::TestBinaryUfuncsPRIVATEUSE1::test_reference_numerics_add_spyre_float16 "
    "\\\n"
    "      testspecs/specs/ --json\n";
