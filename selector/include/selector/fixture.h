/* The synthetic upstream: a git repository shaped like PyTorch, generated from a seed, with the
 * ground truth of every commit written beside it. The selector's tests, its benchmarks and the
 * demo run on it, because no real PyTorch code is ever committed here.
 *
 * The generator builds a model first (source modules with functions and classes calling each
 * other across modules, native operators with YAML entries and C++ kernels, an op database, test
 * files whose tests use all of these), renders it to files, and then writes a history of commits
 * that each edit one thing of the model (a function body, a test body, an op entry, a kernel, a
 * build file, a rename, ...). Because it knows its own call graph, it knows which tests truly
 * depend on each edit: that is the ground truth, in OUT/.ground_truth/ (outside the history):
 *
 *   commits.jsonl  one object per commit, oldest first:
 *     {"id": hex, "parents": [hex...], "kind": "src_body", "paths": ["torch/a/b.py"],
 *      "edited": ["torch.a.b.fn_12"], "fallback": false, "affected_all": false,
 *      "affected": ["test/nn/test_x.py::TestX::test_y", ...]}
 *     "fallback" is true when the change is of the kind a selector must answer with "every
 *     test" (build files, torch/__init__.py, conftest.py, test/run_test.py, the common test
 *     utilities, a deleted or renamed module). "affected_all" is true when every test may truly
 *     depend on the change (a build file); "affected" is then empty to keep the file small.
 *     A merge commit's truth is its first-parent diff: the union of its side branch's commits.
 *   tests.jsonl    one object per test of the head commit:
 *     {"id": ..., "kind": "plain"|"device"|"ops", "uses": [...direct names],
 *      "functions": [...every function and class it reaches], "ops": [...native ops],
 *      "opset": "unary_ufuncs"|...|null}
 *
 * Test ids are `path::Class::method` as written in the source (a device-generic class's template
 * name, before instantiation). The same options always give the same commit ids. */
#ifndef SELECTOR_FIXTURE_H
#define SELECTOR_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

enum selector_fixture_scale {
	SELECTOR_FIXTURE_SMALL,   /* a few hundred files, ~2,000 tests, ~100 commits */
	SELECTOR_FIXTURE_PYTORCH, /* >= 20,000 files, 1,500 test files, 60,000 tests, 3,000 commits
				   */
};

struct selector_fixture_opts {
	const char *out; /* directory to create (or an empty one) */
	enum selector_fixture_scale scale;
	uint64_t seed;
	int commits;      /* every commit of the history, merges included; 0: the scale's default */
	int no_checkout;  /* leave the working tree empty (the objects and refs are complete) */
	int shapes_basic; /* tests call what they use directly: none of the other shapes */
};

struct selector_fixture_stats {
	size_t files;      /* files in the head tree */
	size_t test_files; /* test files (test/.../test_*.py) at head */
	size_t tests;      /* test methods at head */
	size_t src_functions;
	size_t ops;
	size_t commits; /* all commits, merges included */
	size_t merges;
	size_t fallback_commits;
	size_t objects;      /* git objects written */
	uint64_t repo_bytes; /* bytes under OUT/.git */
	double seconds;      /* wall time of the whole generation */
	char head[41];       /* the head commit id */
};

/* Parses "small" or "pytorch"; ERR_INVAL otherwise. */
int selector_fixture_scale_parse(enum selector_fixture_scale *out, const char *s);

/* Generates the repository and its ground truth in opts->out; fills `stats` when not NULL.
 * ERR_EXISTS when opts->out exists and is not empty, ERR_IO and others from libgit2 with the
 * detail in err_last(). */
int selector_fixture_generate(const struct selector_fixture_opts *opts,
			      struct selector_fixture_stats *stats);

#endif
