/* The resolver's index: built once per spec_set (testspecs_resolver_create), then used to find
 * the test entries whose names match a test id without scanning or recompiling anything: plain
 * method names by binary search per file, regular expressions filtered by literal prefix first.
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "resolve_index.h"

#define TOKEN_TORCH_ROOT  "${TORCH_ROOT}/"
#define TOKEN_DEVICE_ROOT "${TORCH_DEVICE_ROOT}/"

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Splits one name into its parts and compiles what is not plain. */
static int rule_init(struct name_rule *rule, const struct spec_test *test,
		     const struct spec_str *name)
{
	rule->test = test;
	rule->name = name;
	const char *sep = strstr(name->s, "::");
	const char *method = sep ? sep + 2 : name->s;
	int rc = 0;
	if (sep) {
		char *cls = strndup(name->s, (size_t)(sep - name->s));
		if (!cls)
			return err_set(ERR_NOMEM, "resolver: class of '%s'", name->s);
		if (testspecs_name_is_plain(cls)) {
			rule->cls = cls;
		} else {
			rc = testspecs_regex_create(&rule->cls_re, cls);
			free(cls);
		}
	}
	if (rc == 0 && testspecs_name_is_plain(method)) {
		rule->method = strdup(method);
		if (!rule->method)
			rc = err_set(ERR_NOMEM, "resolver: method of '%s'", name->s);
	} else if (rc == 0) {
		rc = testspecs_regex_create(&rule->method_re, method);
	}
	if (rc)
		return err_prefix("%s:%u:%u: test name", name->loc.file ? name->loc.file : "?",
				  name->loc.line, name->loc.col);
	/* A plain name may end in the one "\n" torch-spyre's test tolerates: drop it. */
	if (rule->method && rule->method[0] && rule->method[strlen(rule->method) - 1] == '\n')
		rule->method[strlen(rule->method) - 1] = '\0';
	return 0;
}

static const struct file_index *sort_fi; /* qsort has no context argument */

static int cmp_plain(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(sort_fi->rules[x].method, sort_fi->rules[y].method);
	return c ? c : (x > y) - (x < y);
}

static int file_index_build(struct file_index *fi, const struct spec_file *file)
{
	fi->file = file;
	const char *p = file->path.s ? file->path.s : "";
	if (starts_with(p, TOKEN_TORCH_ROOT)) {
		fi->token = PATH_TORCH_ROOT;
		fi->rel = p + strlen(TOKEN_TORCH_ROOT);
	} else if (starts_with(p, TOKEN_DEVICE_ROOT)) {
		fi->token = PATH_DEVICE_ROOT;
		fi->rel = p + strlen(TOKEN_DEVICE_ROOT);
	} else {
		fi->rel = p;
	}
	fi->glob = strpbrk(fi->rel, "*?[") != NULL;
	size_t n = 0;
	for (size_t t = 0; t < file->n_tests; t++)
		n += file->tests[t].names.n;
	fi->rules = calloc(n ? n : 1, sizeof *fi->rules);
	fi->plain = calloc(n ? n : 1, sizeof *fi->plain);
	fi->regex = calloc(n ? n : 1, sizeof *fi->regex);
	if (!fi->rules || !fi->plain || !fi->regex)
		return err_set(ERR_NOMEM, "resolver: %zu names", n);
	for (size_t t = 0; t < file->n_tests; t++) {
		const struct spec_test *test = &file->tests[t];
		for (size_t k = 0; k < test->names.n; k++) {
			struct name_rule *rule = &fi->rules[fi->n_rules];
			int rc = rule_init(rule, test, &test->names.v[k]);
			fi->n_rules++; /* counted even on failure so that destroy frees it */
			if (rc)
				return rc;
			if (rule->method)
				fi->plain[fi->n_plain++] = (uint32_t)(fi->n_rules - 1);
			else
				fi->regex[fi->n_regex++] = (uint32_t)(fi->n_rules - 1);
		}
	}
	sort_fi = fi;
	qsort(fi->plain, fi->n_plain, sizeof *fi->plain, cmp_plain);
	sort_fi = NULL;
	return 0;
}

static void file_index_finish(struct file_index *fi)
{
	for (size_t i = 0; i < fi->n_rules; i++) {
		free(fi->rules[i].cls);
		free(fi->rules[i].method);
		testspecs_regex_destroy(fi->rules[i].cls_re);
		testspecs_regex_destroy(fi->rules[i].method_re);
	}
	free(fi->rules);
	free(fi->plain);
	free(fi->regex);
}

static const struct file_index *sort_files;

static int cmp_key(enum path_token ta, const char *ra, enum path_token tb, const char *rb)
{
	if (ta != tb)
		return (ta > tb) - (ta < tb);
	return strcmp(ra, rb);
}

static int cmp_file(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct file_index *fa = &sort_files[x], *fb = &sort_files[y];
	int c = cmp_key(fa->token, fa->rel, fb->token, fb->rel);
	return c ? c : (x > y) - (x < y);
}

void testspecs_resolver_destroy(struct spec_resolver *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_files; i++)
		file_index_finish(&r->files[i]);
	free(r->files);
	free(r->by_path);
	free(r->globs);
	free(r);
}

int testspecs_resolver_create(struct spec_resolver **out, const struct spec_set *set)
{
	*out = NULL;
	struct spec_resolver *r = calloc(1, sizeof *r);
	if (!r)
		return err_set(ERR_NOMEM, "resolver");
	r->set = set;
	r->files = calloc(set->n_files ? set->n_files : 1, sizeof *r->files);
	if (!r->files) {
		free(r);
		return err_set(ERR_NOMEM, "resolver: %zu files", set->n_files);
	}
	r->by_path = calloc(set->n_files ? set->n_files : 1, sizeof *r->by_path);
	r->globs = calloc(set->n_files ? set->n_files : 1, sizeof *r->globs);
	if (!r->by_path || !r->globs) {
		testspecs_resolver_destroy(r);
		return err_set(ERR_NOMEM, "resolver: %zu files", set->n_files);
	}
	for (size_t i = 0; i < set->n_files; i++) {
		r->n_files = i + 1;
		int rc = file_index_build(&r->files[i], &set->files[i]);
		if (rc) {
			testspecs_resolver_destroy(r);
			return rc;
		}
		if (r->files[i].glob)
			r->globs[r->n_globs++] = (uint32_t)i;
		else
			r->by_path[r->n_by_path++] = (uint32_t)i;
	}
	sort_files = r->files;
	qsort(r->by_path, r->n_by_path, sizeof *r->by_path, cmp_file);
	sort_files = NULL;
	*out = r;
	return 0;
}

static int path_eq(const struct file_index *fi, const char *path)
{
	if (fi->glob)
		return testspecs_glob_match(fi->rel, path);
	return strcmp(fi->rel, path) == 0;
}

int resolve__file_matches(const struct file_index *fi, const struct spec_test_id *id)
{
	const char *p = id->path;
	if (!p[0])
		return 1;
	if (starts_with(p, TOKEN_DEVICE_ROOT))
		return fi->token == PATH_DEVICE_ROOT && path_eq(fi, p + strlen(TOKEN_DEVICE_ROOT));
	if (starts_with(p, TOKEN_TORCH_ROOT))
		p += strlen(TOKEN_TORCH_ROOT);
	if (p[0] == '/') {
		const char *res = fi->file->resolved;
		if (!res)
			return fi->token == PATH_PLAIN && path_eq(fi, p);
		return fi->glob ? testspecs_glob_match(res, p) : strcmp(res, p) == 0;
	}
	return fi->token != PATH_DEVICE_ROOT && path_eq(fi, p);
}

static int class_matches(const struct name_rule *rule, const struct spec_test_id *id, int *err)
{
	if (!id->cls[0] || (!rule->cls && !rule->cls_re))
		return 1;
	if (rule->cls)
		return strcmp(rule->cls, id->base_cls) == 0 || strcmp(rule->cls, id->cls) == 0;
	int m = testspecs_regex_match(rule->cls_re, id->base_cls, strlen(id->base_cls));
	if (m == 0 && strcmp(id->base_cls, id->cls) != 0)
		m = testspecs_regex_match(rule->cls_re, id->cls, strlen(id->cls));
	if (m < 0)
		*err = m;
	return m == 1;
}

int resolve__class_ok(const struct name_rule *rule, const struct spec_test_id *id)
{
	int err = 0;
	int m = class_matches(rule, id, &err);
	return err ? err : m;
}

size_t resolve__plain_from(const struct file_index *fi, const char *prefix)
{
	size_t lo = 0, hi = fi->n_plain;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(fi->rules[fi->plain[mid]].method, prefix) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The lengths of the stem that may be the base name, longest first: the whole stem, then (for
 * a device-generic id, whose stem may still carry `_<op>`) every prefix ending before a '_'. */
static size_t base_lengths(const struct spec_test_id *id, uint32_t *lens, size_t cap)
{
	size_t n = strlen(id->stem), k = 0;
	lens[k++] = (uint32_t)n;
	if (!id->device_generic)
		return k;
	for (size_t i = n; i-- > 1 && k < cap;)
		if (id->stem[i] == '_')
			lens[k++] = (uint32_t)i;
	return k;
}

/* The first index in the sorted plain table whose method is >= stem[0..len). */
static size_t lower_bound(const struct file_index *fi, const char *stem, size_t len)
{
	size_t lo = 0, hi = fi->n_plain;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *m = fi->rules[fi->plain[mid]].method;
		int c = strncmp(m, stem, len);
		if (c == 0 && m[len] != '\0')
			c = 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int already(const struct rule_hit *hits, size_t n, uint32_t f, uint32_t rule)
{
	for (size_t i = 0; i < n; i++)
		if (hits[i].file == f && hits[i].rule == rule)
			return 1;
	return 0;
}

static int add_hit(struct rule_hit *hits, size_t *n, size_t cap, uint32_t f, uint32_t rule,
		   uint32_t len)
{
	if (already(hits, *n, f, rule))
		return 0;
	if (*n >= cap)
		return err_set(ERR_LIMIT, "resolver: more than %zu entries match one test", cap);
	hits[*n] = (struct rule_hit){ f, rule, len };
	(*n)++;
	return 0;
}

int resolve__match_rules(const struct spec_resolver *r, uint32_t f, const struct spec_test_id *id,
			 struct rule_hit *hits, size_t *n, size_t cap)
{
	const struct file_index *fi = &r->files[f];
	uint32_t lens[64];
	size_t nl = base_lengths(id, lens, 64);
	int err = 0;
	for (size_t l = 0; l < nl && err == 0; l++) {
		for (size_t i = lower_bound(fi, id->stem, lens[l]); i < fi->n_plain; i++) {
			const struct name_rule *rule = &fi->rules[fi->plain[i]];
			if (strncmp(rule->method, id->stem, lens[l]) != 0 || rule->method[lens[l]])
				break;
			if (class_matches(rule, id, &err) && !err) {
				err = add_hit(hits, n, cap, f, fi->plain[i], lens[l]);
				if (err)
					return err;
			}
		}
	}
	for (size_t i = 0; i < fi->n_regex && err == 0; i++) {
		const struct name_rule *rule = &fi->rules[fi->regex[i]];
		for (size_t l = 0; l < nl; l++) {
			int m = testspecs_regex_match(rule->method_re, id->stem, lens[l]);
			if (m < 0)
				return m;
			if (m == 1 && class_matches(rule, id, &err) && !err) {
				err = add_hit(hits, n, cap, f, fi->regex[i], lens[l]);
				break;
			}
		}
	}
	return err;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

size_t resolve__files_for(const struct spec_resolver *r, const struct spec_test_id *id,
			  uint32_t *out, size_t cap)
{
	size_t n = 0;
	const char *p = id->path;
	enum path_token tok = PATH_TORCH_ROOT;
	if (starts_with(p, TOKEN_DEVICE_ROOT)) {
		tok = PATH_DEVICE_ROOT;
		p += strlen(TOKEN_DEVICE_ROOT);
	} else if (starts_with(p, TOKEN_TORCH_ROOT)) {
		p += strlen(TOKEN_TORCH_ROOT);
	}
	if (!id->path[0] || p[0] == '/') { /* every file, or resolved paths: the slow way */
		for (size_t f = 0; f < r->n_files && n < cap; f++)
			if (resolve__file_matches(&r->files[f], id))
				out[n++] = (uint32_t)f;
		return n;
	}
	/* Relative ids match TORCH_ROOT entries and token-less relative entries alike. */
	enum path_token toks[2] = { tok, PATH_PLAIN };
	for (size_t t = 0; t < (tok == PATH_TORCH_ROOT ? 2u : 1u); t++) {
		size_t lo = 0, hi = r->n_by_path;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct file_index *fi = &r->files[r->by_path[mid]];
			if (cmp_key(fi->token, fi->rel, toks[t], p) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < r->n_by_path && n < cap; lo++) {
			const struct file_index *fi = &r->files[r->by_path[lo]];
			if (cmp_key(fi->token, fi->rel, toks[t], p) != 0)
				break;
			out[n++] = r->by_path[lo];
		}
	}
	for (size_t g = 0; g < r->n_globs && n < cap; g++)
		if (resolve__file_matches(&r->files[r->globs[g]], id))
			out[n++] = r->globs[g];
	qsort(out, n, sizeof *out, cmp_u32);
	return n;
}
