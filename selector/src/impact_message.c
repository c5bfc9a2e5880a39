/* Stage 2's message signal: the tests of the head catalog named in the commit messages of the
 * range (change_set commits). The tokenizer (impact_message_tok.c) gives the words that may name
 * tests and their form; this file resolves them against indexes of the head catalog, built once
 * per run and only when a message has such a word: method name -> tests, class name -> tests,
 * file -> its tests. Instantiated names map back to what the catalog holds: a device class
 * TestFooCUDA to its template TestFoo (device-generic tests), a method with suffixes
 * test_out_add_cpu_float32 to the longest prefix that is a test (device-generic, parametrized
 * or @ops tests only). Each test keeps the strongest form that named it, one reason. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "impact_internal.h"

#define NONE        SIZE_MAX
#define CONTEXT_MAX 16 /* classes of one message that narrow its bare names */

/* Scores by form (before stage 4's weight of "message"). */
#define SCORE_ID    1.0
#define SCORE_CM    0.9 /* Class.method, or a bare name with its class in the same message */
#define SCORE_GROUP 0.6 /* path::Class, -k NAME */
#define SCORE_BARE  0.4
#define SCORE_FILE  0.2

struct msg_index {
	const struct catalog *cat;
	struct strmap by_name, by_class; /* -> first test index (the catalog's, borrowed) */
	struct strmap changed;           /* paths the change set touches */
	size_t *next_name, *next_class;  /* per test: the next of the same name / class */
	size_t *file_first, *file_n;     /* per file: its tests (contiguous in the catalog) */
	double *best;                    /* per test: the strongest score so far, 0: none */
	const char **why;                /* per test: its reason (arena) */
	size_t *touched, n_touched;      /* tests with a reason, in the order first named */
	struct arena arena;
};

/* What a token selects: tests of `file` (NONE: any) of class `cls` and name `name` (NULL: any);
 * only device-generic ones when the class was instantiated (TestFooCUDA), only generated ones
 * (device-generic, parametrized, @ops) when the name was (test_foo_cuda). */
struct query {
	size_t file;
	const char *cls, *name;
	bool cut_cls, cut_name;
};

static const char *name_of(const struct catalog_test *t)
{
	const char *c = strrchr(t->id, ':');
	return c ? c + 1 : t->id;
}

static bool generated(const struct catalog_test *t)
{
	return t->device_generic || t->parametrized || t->opset != CATALOG_OPSET_NONE;
}

static bool same_class(const struct catalog_test *a, const struct catalog_test *b)
{
	return a->class_name && b->class_name && a->file == b->file &&
	       (a->class_name == b->class_name || strcmp(a->class_name, b->class_name) == 0);
}

/* What of the index depends on the head catalog alone, kept with it (catalog_priv.msg_index):
 * the daemon's warm path pays it once per head, not once per run. */
struct impact_msg_index {
	struct strmap by_name, by_class;
	size_t *next_name, *next_class, *file_first, *file_n;
};

void impact__msg_index_destroy(struct impact_msg_index *k)
{
	if (!k)
		return;
	strmap_free(&k->by_name);
	strmap_free(&k->by_class);
	free(k->next_name);
	free(k->next_class);
	free(k->file_first);
	free(k->file_n);
	free(k);
}

/* The catalog's index, built on first need; NULL (the error set) when out of memory. */
static struct impact_msg_index *catalog_index(const struct catalog *cat)
{
	struct catalog_priv *priv = cat->priv_;
	if (priv->msg_index)
		return priv->msg_index;
	size_t n = cat->n_tests, nf = cat->n_files + 1;
	struct impact_msg_index *k = calloc(1, sizeof(*k));
	if (!k || !(k->next_name = malloc(n * sizeof(size_t) + 1)) ||
	    !(k->next_class = malloc(n * sizeof(size_t) + 1)) ||
	    !(k->file_first = calloc(nf, sizeof(size_t))) ||
	    !(k->file_n = calloc(nf, sizeof(size_t)))) {
		impact__msg_index_destroy(k);
		err_set(ERR_NOMEM, "message index: %zu tests", n);
		return NULL;
	}
	for (size_t i = n; i-- > 0;) { /* backwards: each chain in catalog order */
		const struct catalog_test *t = &cat->tests[i];
		intptr_t v;
		k->next_name[i] = strmap_get(&k->by_name, name_of(t), &v) ? (size_t)v : NONE;
		k->next_class[i] = NONE;
		int rc = strmap_put(&k->by_name, name_of(t), (intptr_t)i);
		/* A class's tests are runs of neighbours: the map is read at a run's last test (for
		 * the next run of that name, in another file) and written at its first. */
		if (t->class_name && i + 1 < n && same_class(t, t + 1))
			k->next_class[i] = i + 1;
		else if (t->class_name && strmap_get(&k->by_class, t->class_name, &v))
			k->next_class[i] = (size_t)v;
		if (!rc && t->class_name && (i == 0 || !same_class(t - 1, t)))
			rc = strmap_put(&k->by_class, t->class_name, (intptr_t)i);
		if (rc) {
			impact__msg_index_destroy(k);
			err_set(ERR_NOMEM, "message index");
			return NULL;
		}
		if (t->file < cat->n_files) {
			k->file_first[t->file] = i;
			k->file_n[t->file]++;
		}
	}
	priv->msg_index = k;
	return k;
}

static int index_build(struct msg_index *ix, const struct change_set *cs)
{
	for (size_t i = 0; i < cs->n_files; i++)
		if (strmap_put(&ix->changed, cs->files[i].new_path.bytes, 1) ||
		    strmap_put(&ix->changed, cs->files[i].old_path.bytes, 1))
			return err_set(ERR_NOMEM, "message index");
	const struct impact_msg_index *k = catalog_index(ix->cat);
	if (!k)
		return ERR_NOMEM;
	/* Borrowed from the catalog's index: never freed here. */
	ix->by_name = k->by_name;
	ix->by_class = k->by_class;
	ix->next_name = k->next_name;
	ix->next_class = k->next_class;
	ix->file_first = k->file_first;
	ix->file_n = k->file_n;
	size_t n = ix->cat->n_tests;
	ix->touched = malloc(n * sizeof(size_t) + 1);
	ix->best = calloc(n + 1, sizeof(double));
	ix->why = calloc(n + 1, sizeof(char *));
	if (!ix->touched || !ix->best || !ix->why)
		return err_set(ERR_NOMEM, "message index: %zu tests", n);
	return 0;
}

static void index_finish(struct msg_index *ix)
{
	strmap_free(&ix->changed);
	free(ix->touched);
	free(ix->best);
	free(ix->why);
	scan__arena_free(&ix->arena);
}

static size_t first_of(const struct strmap *m, const char *key)
{
	intptr_t v;
	return strmap_get(m, key, &v) ? (size_t)v : NONE;
}

/* The catalog's method name for `s` (written, or instantiated: the longest prefix cut at '_'
 * that names a generated test), or NULL. *cut: a suffix was stripped. */
static const char *resolve_name(const struct msg_index *ix, const char *s, size_t n, bool *cut)
{
	char buf[IMPACT_MESSAGE_TOKEN_MAX + 1];
	memcpy(buf, s, n);
	buf[n] = '\0';
	for (int k = 0; k <= IMPACT_MESSAGE_STRIP_MAX; k++) {
		for (size_t i = first_of(&ix->by_name, buf); i != NONE; i = ix->next_name[i])
			if (k == 0 || generated(&ix->cat->tests[i])) {
				*cut = k > 0;
				return name_of(&ix->cat->tests[i]);
			}
		char *u = strrchr(buf, '_');
		if (!u || u - buf < 5) /* keep at least "test_"'s worth */
			break;
		*u = '\0';
	}
	return NULL;
}

/* The catalog's class name for `s`: as written, or an instantiated device class (TestFooCPU,
 * TestFooCUDA, ...) whose template holds device-generic tests. NULL when none. */
static const char *resolve_class(const struct msg_index *ix, const char *s, size_t n, bool *cut)
{
	static const char *const devices[] = { "CPU", "CUDA", "Meta", "MPS",  "XLA",
					       "XPU", "HPU",  "Lazy", "MTIA", "PrivateUse1" };
	char buf[IMPACT_MESSAGE_TOKEN_MAX + 1];
	memcpy(buf, s, n);
	buf[n] = '\0';
	size_t i = first_of(&ix->by_class, buf);
	*cut = false;
	if (i != NONE)
		return ix->cat->tests[i].class_name;
	for (size_t d = 0; d < sizeof(devices) / sizeof(devices[0]); d++) {
		size_t k = strlen(devices[d]);
		if (n <= k || strcmp(buf + n - k, devices[d]) != 0)
			continue;
		buf[n - k] = '\0';
		for (i = first_of(&ix->by_class, buf); i != NONE; i = ix->next_class[i])
			if (ix->cat->tests[i].device_generic) {
				*cut = true;
				return ix->cat->tests[i].class_name;
			}
		buf[n - k] = devices[d][0];
	}
	return NULL;
}

/* The test file at `path`, or at test/`path`; NONE when the catalog has none. */
static size_t resolve_file(const struct msg_index *ix, const char *s, size_t n)
{
	char buf[IMPACT_MESSAGE_TOKEN_MAX + 8];
	for (int k = 0; k < 2; k++) {
		snprintf(buf, sizeof(buf), "%s%.*s", k ? "test/" : "", (int)n, s);
		const struct catalog_file *f = selector_catalog_file(ix->cat, buf);
		if (f && f->kind == CATALOG_TEST)
			return (size_t)(f - ix->cat->files);
	}
	return NONE;
}

static bool query_has(const struct msg_index *ix, const struct query *q, size_t i)
{
	const struct catalog_test *t = &ix->cat->tests[i];
	return (q->file == NONE || t->file == q->file) && (!q->cut_cls || t->device_generic) &&
	       (!q->cut_name || generated(t)) &&
	       (!q->cls || (t->class_name && strcmp(t->class_name, q->cls) == 0)) &&
	       (!q->name || strcmp(name_of(t), q->name) == 0);
}

/* The next test of the query after `i` (NONE: the first), walking the shortest list at hand. */
static size_t query_next(const struct msg_index *ix, const struct query *q, size_t i)
{
	const struct catalog *cat = ix->cat;
	do {
		if (q->name)
			i = i == NONE ? first_of(&ix->by_name, q->name) : ix->next_name[i];
		else if (q->cls)
			i = i == NONE ? first_of(&ix->by_class, q->cls) : ix->next_class[i];
		else if (q->file != NONE)
			i = i == NONE ? (ix->file_n[q->file] ? ix->file_first[q->file] : NONE)
			    : i + 1 < cat->n_tests && cat->tests[i + 1].file == q->file ? i + 1
											: NONE;
		else
			return NONE;
	} while (i != NONE && !query_has(ix, q, i));
	return i;
}

/* The state of one message: its commit, the classes it names, the tests it selected. */
struct msg {
	const struct change_commit *commit;
	struct {
		const char *name;
		bool cut; /* named instantiated: TestFooCUDA */
	} context[CONTEXT_MAX];
	size_t n_context, picked;
	const struct impact_message_token *next; /* the token after the one being matched */
};

/* Selects at most `limit` tests of `q` (and what the message has left) with `score` and the
 * reason "commit ID names TOKEN (FORM[, instantiated ...], N tests)". Returns the number of
 * tests `q` matches (even past the limit), or a negative error. */
static long select_query(struct msg_index *ix, struct msg *m, const struct impact_message_token *t,
			 const struct query *q, size_t limit, double score, const char *form)
{
	size_t total = 0;
	for (size_t i = query_next(ix, q, NONE); i != NONE; i = query_next(ix, q, i))
		total++;
	if (total == 0)
		return 0;
	size_t left = IMPACT_MESSAGE_TESTS_MAX - m->picked;
	if (limit > left)
		limit = left;
	char count[96], buf[400], who[32];
	if (total <= limit)
		snprintf(count, sizeof(count), "%zu test%s", total, total == 1 ? "" : "s");
	else
		snprintf(count, sizeof(count), "the first %zu of %zu tests (bound)", limit, total);
	if (m->commit->id[0])
		snprintf(who, sizeof(who), "commit %.12s", m->commit->id);
	else
		snprintf(who, sizeof(who), "the patch's message");
	const char *note = q->cut_cls && q->cut_name ? ", instantiated class and name"
			   : q->cut_cls              ? ", instantiated class"
			   : q->cut_name             ? ", instantiated name"
						     : "";
	snprintf(buf, sizeof(buf), "%s names %.*s (%s%s, %s)", who, (int)(t->n < 120 ? t->n : 120),
		 t->s, form ? form : selector_impact_message_form_name(t->form), note, count);
	const char *why = scan__strndup(&ix->arena, buf, strlen(buf));
	if (!why)
		return err_set(ERR_NOMEM, "message reason");
	size_t k = 0;
	for (size_t i = query_next(ix, q, NONE); i != NONE && k < limit;
	     i = query_next(ix, q, i), k++) {
		if (ix->best[i] == 0)
			ix->touched[ix->n_touched++] = i;
		if (score > ix->best[i]) {
			ix->best[i] = score;
			ix->why[i] = why;
		}
	}
	m->picked += k;
	return (long)total;
}

/* A bare name: narrowed to the class named right after it ("test_x in TestFoo", "test_x
 * (__main__.TestFoo)") when that one has it, else to the first class the message names that
 * has it, else every test so named, at most IMPACT_MESSAGE_BARE_MAX. */
static long match_bare(struct msg_index *ix, struct msg *m, const struct impact_message_token *t,
		       const char *name, bool cut)
{
	bool nc;
	const char *next = m->next && m->next->form == IMPACT_FORM_CLASS
			       ? resolve_class(ix, m->next->cls, m->next->cls_n, &nc)
			       : NULL;
	if (next) {
		struct query q = { NONE, next, name, nc, cut };
		char form[160];
		snprintf(form, sizeof(form), "bare name with class %s after it", next);
		long rc = select_query(ix, m, t, &q, IMPACT_MESSAGE_GROUP_MAX, SCORE_CM, form);
		if (rc)
			return rc;
	}
	for (size_t c = 0; c < m->n_context; c++) {
		struct query q = { NONE, m->context[c].name, name, m->context[c].cut, cut };
		char form[160];
		snprintf(form, sizeof(form), "bare name with class %s in the message",
			 m->context[c].name);
		long rc = select_query(ix, m, t, &q, IMPACT_MESSAGE_GROUP_MAX, SCORE_CM, form);
		if (rc)
			return rc;
	}
	struct query q = { NONE, NULL, name, false, cut };
	return select_query(ix, m, t, &q, IMPACT_MESSAGE_BARE_MAX, SCORE_BARE, NULL);
}

static long match_token(struct msg_index *ix, struct msg *m, const struct impact_message_token *t)
{
	bool cc = false, cn = false;
	const char *cls = t->cls_n ? resolve_class(ix, t->cls, t->cls_n, &cc) : NULL;
	const char *name = t->name_n ? resolve_name(ix, t->name, t->name_n, &cn) : NULL;
	size_t file = t->path_n ? resolve_file(ix, t->path, t->path_n) : NONE;
	size_t lim = IMPACT_MESSAGE_GROUP_MAX;
	if (t->path_n && file == NONE)
		return 0;
	switch (t->form) {
	case IMPACT_FORM_FULL_ID:
	case IMPACT_FORM_CLASS_METHOD:
		if (!cls || !name)
			return 0;
		return select_query(ix, m, t, &(struct query){ file, cls, name, cc, cn }, lim,
				    t->form == IMPACT_FORM_FULL_ID ? SCORE_ID : SCORE_CM, NULL);
	case IMPACT_FORM_PATH_CLASS: {
		bool cf = false; /* path::function first, then path::Class */
		const char *fn = resolve_name(ix, t->cls, t->cls_n, &cf);
		long rc = fn ? select_query(ix, m, t, &(struct query){ file, NULL, fn, false, cf },
					    1, SCORE_ID, "path::function")
			     : 0;
		if (rc || !cls)
			return rc;
		return select_query(ix, m, t, &(struct query){ file, cls, NULL, cc, false }, lim,
				    SCORE_GROUP, NULL);
	}
	case IMPACT_FORM_FILE:
		/* A file the change edits is named to say so: its own signals are more precise. */
		if (strmap_get(&ix->changed, ix->cat->files[file].path, NULL))
			return 0;
		return select_query(ix, m, t, &(struct query){ file, NULL, NULL, false, false },
				    lim, SCORE_FILE, "file, all its tests");
	case IMPACT_FORM_K:
		if (name)
			return select_query(
			    ix, m, t, &(struct query){ file, NULL, name, false, cn },
			    file == NONE ? IMPACT_MESSAGE_BARE_MAX : lim, SCORE_GROUP, NULL);
		cls = resolve_class(ix, t->name, t->name_n, &cc);
		return cls ? select_query(ix, m, t, &(struct query){ file, cls, NULL, cc, false },
					  lim, SCORE_GROUP, "-k, a class")
			   : 0;
	case IMPACT_FORM_BARE:
		return name ? match_bare(ix, m, t, name, cn) : 0;
	case IMPACT_FORM_CLASS:
		return 0; /* context only */
	}
	return 0;
}

static int match_message(struct msg_index *ix, const struct change_commit *c,
			 const struct impact_message_token *toks, size_t n)
{
	struct msg m = { .commit = c };
	for (size_t i = 0; i < n && m.n_context < CONTEXT_MAX; i++) {
		bool cut;
		const char *cls = toks[i].form == IMPACT_FORM_CLASS
				      ? resolve_class(ix, toks[i].cls, toks[i].cls_n, &cut)
				      : NULL;
		if (cls) {
			m.context[m.n_context].name = cls;
			m.context[m.n_context++].cut = cut;
		}
	}
	for (size_t i = 0; i < n && m.picked < IMPACT_MESSAGE_TESTS_MAX; i++) {
		m.next = i + 1 < n ? &toks[i + 1] : NULL;
		long rc = match_token(ix, &m, &toks[i]);
		if (rc < 0)
			return (int)rc;
	}
	return 0;
}

int impact__messages_to_tests(struct ictx *x)
{
	if (x->cs->n_commits == 0 || x->head->n_tests == 0)
		return 0;
	struct msg_index ix = { .cat = x->head };
	struct impact_message_token *toks = malloc(IMPACT_MESSAGE_TOKENS_MAX * sizeof(*toks));
	int rc = toks ? 0 : err_set(ERR_NOMEM, "message tokens");
	for (size_t c = 0; !rc && c < x->cs->n_commits; c++) {
		const struct change_commit *cm = &x->cs->commits[c];
		const char *msg = cm->message ? cm->message : "";
		size_t n = selector_impact_message_tokens(toks, IMPACT_MESSAGE_TOKENS_MAX, msg,
							  strnlen(msg, IMPACT_MESSAGE_BYTES_MAX));
		if (n && !ix.best)
			rc = index_build(&ix, x->cs);
		if (n && !rc)
			rc = match_message(&ix, cm, toks, n);
	}
	for (size_t k = 0; !rc && k < ix.n_touched; k++) {
		size_t i = ix.touched[k];
		rc = impact__add(x, x->head->tests[i].id, IMPACT_MESSAGE, ix.best[i], "%s",
				 ix.why[i]);
	}
	index_finish(&ix);
	free(toks);
	return rc;
}
