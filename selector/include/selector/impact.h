/* Stage 2 of the selector, impact: from a change set and the catalogs at base and head to the
 * candidate tests, each with a score and the reasons (signals) that chose it. Signals: a test
 * edited (body hash) or its file's module level edited; op database entries edited -> @ops tests
 * over those ops; changed functions and classes of torch/ ** .py -> their callers, transitively
 * through a call graph by qualified name (bounded depth) -> tests whose bodies use any of them;
 * @register_*(aten.x) in a changed function, native_functions.yaml entries and C++ kernels ->
 * ops -> @ops tests and tests calling torch.op / .op; path rules; a coverage map; tests named in
 * the commit messages of the range (selector_impact_message_tokens below). A change the
 * analysis cannot reason about sets `fallback` with the reason: every test is a candidate. */
#ifndef SELECTOR_IMPACT_H
#define SELECTOR_IMPACT_H

#include <stdbool.h>
#include <stddef.h>

#include "selector/catalog.h"
#include "selector/changes.h"

enum impact_signal {
	IMPACT_TEST_EDITED, /* the test's body changed, or it was added */
	IMPACT_TEST_MODULE, /* module-level code of its file changed */
	IMPACT_OPDB,        /* an op database entry of an op it runs over changed */
	IMPACT_SYMBOL,      /* it uses a changed function/class, or a caller of one */
	IMPACT_NATIVE,      /* an op it reaches changed in native code or a registration */
	IMPACT_PATH_RULE,   /* a configured path rule */
	IMPACT_COVERAGE,    /* the coverage map */
	IMPACT_MESSAGE,     /* a commit message of the range names it (impact_message.c) */
};

struct impact_reason {
	enum impact_signal signal;
	char *detail; /* "torch.nn.functional.gelu changed (distance 2)" */
	double score;
};

struct impact_candidate {
	const char *id; /* the head catalog's test id */
	double score;   /* the sum of the reasons' scores */
	struct impact_reason *reasons;
	size_t n_reasons;
};

struct impact_path_rule {
	const char *glob;       /* on the changed path ('*' crosses '/') */
	const char *tests_glob; /* on test ids; NULL: use test_ids */
	const char *const *test_ids;
	size_t n_test_ids;
	double score;
};

struct impact_config {
	const char *const *fallback_globs; /* NULL: the default list (impact.c) */
	size_t n_fallback_globs;
	const struct impact_path_rule *rules;
	size_t n_rules;
	const char *coverage_json; /* a JSON object: source path -> [test ids]; NULL: none */
};

struct impact_result {
	bool fallback;
	char *fallback_reason;               /* "build file changed: setup.py" */
	struct impact_candidate *candidates; /* sorted by id; every head test when fallback, and
						the base's tests of a test file the head has but
						cannot scan (ids owned by the result) */
	size_t n_candidates;
	char **owned_ids; /* the ids the result owns */
	size_t n_owned;
};

/* Runs stage 2. `base` may be an empty catalog (selector_catalog_build with rev NULL); `config`
 * may be NULL. Returns 0 or ERR_NOMEM / ERR_INVAL (a malformed coverage map). */
int selector_impact_run(struct impact_result **out, const struct change_set *changes,
			const struct catalog *base, const struct catalog *head,
			const struct impact_config *config);
void selector_impact_result_destroy(struct impact_result *res);

/* For tests and benchmarks: 1 when the head catalog's stage 2 graph was laid over the base's
 * (shared with it, the edges of `*overlay_files` changed source files laid over), 0 when it was
 * built from scratch, -1 when no run at that head has needed it yet (or the cache dropped it
 * for a newer source graph: the next run builds it again). */
int selector_impact_graph_reused(const struct catalog *head, size_t *overlay_files);

const char *selector_impact_signal_name(enum impact_signal signal);

/* ---- the message signal ---- */

/* How a commit message names tests. */
enum impact_message_form {
	IMPACT_FORM_FULL_ID,      /* path::Class::method (path::function is a PATH_CLASS) */
	IMPACT_FORM_PATH_CLASS,   /* path::Class (all its tests), or path::function */
	IMPACT_FORM_CLASS_METHOD, /* Class.method, Class::method, module.Class.method */
	IMPACT_FORM_FILE,         /* test/x.py, test_x.py (all its tests) */
	IMPACT_FORM_K,            /* pytest's -k with one identifier, scoped by a file before it */
	IMPACT_FORM_BARE,         /* test_xxx */
	IMPACT_FORM_CLASS,        /* a bare TestXxx: no tests of its own, it narrows bare names */
};

/* One token of a message that may name tests: spans into the message (path, cls, name may be
 * empty: n == 0). Classes and names are as written (TestFooCUDA, test_add_cpu_float32). */
struct impact_message_token {
	enum impact_message_form form;
	const char *s; /* the whole token as matched */
	size_t n;
	const char *path, *cls, *name;
	size_t path_n, cls_n, name_n;
};

/* Splits `msg` (`len` bytes, any bytes: only [A-Za-z0-9_./:-] make tokens, every other byte
 * separates) into at most `max` tokens that may name tests, reading at most
 * IMPACT_MESSAGE_BYTES_MAX bytes; URLs and tokens longer than IMPACT_MESSAGE_TOKEN_MAX are
 * skipped. Returns the number of tokens written to `out`. Never fails. */
size_t selector_impact_message_tokens(struct impact_message_token *out, size_t max, const char *msg,
				      size_t len);
const char *selector_impact_message_form_name(enum impact_message_form form);

#endif
