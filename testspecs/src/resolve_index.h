/* The resolver's index, private to resolve*.c: per file entry, every test name split into its
 * class and method parts, plain parts sorted for binary search and regular expressions compiled
 * once with their literal prefixes (see testspecs/resolve.h for the matching rules). */
#ifndef TESTSPECS_RESOLVE_INDEX_H
#define TESTSPECS_RESOLVE_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "testspecs/regex.h"
#include "testspecs/resolve.h"

enum path_token { PATH_PLAIN = 0, PATH_TORCH_ROOT, PATH_DEVICE_ROOT };

struct name_rule {
	const struct spec_test *test;
	const struct spec_str *name;
	char *cls;                 /* plain class part, NULL when none or a regex */
	struct spec_regex *cls_re; /* regex class part */
	char *method;              /* plain method part, NULL when a regex */
	struct spec_regex *method_re;
};

struct file_index {
	const struct spec_file *file;
	enum path_token token;
	const char *rel; /* the path after the token (into the set's string) */
	int glob;
	struct name_rule *rules; /* document order: the index is the precedence */
	size_t n_rules;
	uint32_t *plain; /* rules with a plain method, sorted by method then index */
	size_t n_plain;
	uint32_t *regex; /* rules with a regex method, in document order */
	size_t n_regex;
};

struct spec_resolver {
	const struct spec_set *set;
	struct file_index *files;
	size_t n_files;
	uint32_t *by_path; /* non-glob files sorted by (token, rel), for binary search */
	size_t n_by_path;
	uint32_t *globs; /* glob files, in order */
	size_t n_globs;
};

/* A rule that matched an id: which, and how many bytes of the id's stem are its base name. */
struct rule_hit {
	uint32_t file;
	uint32_t rule;
	uint32_t base_len;
};

/* 1 when file entry `fi` covers the id's path (rules in resolve.h, point 1). */
int resolve__file_matches(const struct file_index *fi, const struct spec_test_id *id);

/* The files that cover the id, in document order; returns how many (at most cap). */
size_t resolve__files_for(const struct spec_resolver *r, const struct spec_test_id *id,
			  uint32_t *out, size_t cap);

/* Appends to hits[*n] every rule of file `f` that matches the id; ERR_LIMIT past `cap`, or a
 * regex error. */
int resolve__match_rules(const struct spec_resolver *r, uint32_t f, const struct spec_test_id *id,
			 struct rule_hit *hits, size_t *n, size_t cap);

/* Point 10 of resolve.h: when `out` (the decision for `test_id`) is not eligible, the entries
 * naming the test's variants are resolved, and the strongest eligible one's decision replaces
 * `out`. Returns 0 or the error of a variant's resolution. */
int resolve__variants(const struct spec_resolver *r, const char *test_id,
		      const struct spec_resolve_opts *o, struct spec_decision *out);

/* The first index of the sorted plain table whose method is >= `prefix` (every method that
 * starts with it follows, contiguously). */
size_t resolve__plain_from(const struct file_index *fi, const char *prefix);

/* Whether the rule's class part admits the id's class (1), not (0), or a regex error (<0). */
int resolve__class_ok(const struct name_rule *rule, const struct spec_test_id *id);

#endif
