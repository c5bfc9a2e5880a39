/* `spyre-ci fixture`: generated test material. `fixture upstream` writes a synthetic git
 * repository shaped like PyTorch, with the ground truth of every commit beside it, for the
 * selector's tests, its benchmarks and the demo (see fixture/fixture.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "common/err.h"
#include "common/jsonx.h"
#include "common/limits.h"
#include "common/num.h"
#include "fixture/fixture.h"

static const struct cli_command *self(void)
{
	return cli_find("fixture");
}

static int print_stats(const struct fixture_opts *o, const struct fixture_stats *s, int json)
{
	if (json) {
		json_t *j = json_object();
		jx_set_str(j, "out", o->out);
		jx_set_str(j, "head", s->head);
		jx_set_int(j, "files", (int64_t)s->files);
		jx_set_int(j, "test_files", (int64_t)s->test_files);
		jx_set_int(j, "tests", (int64_t)s->tests);
		jx_set_int(j, "src_functions", (int64_t)s->src_functions);
		jx_set_int(j, "ops", (int64_t)s->ops);
		jx_set_int(j, "commits", (int64_t)s->commits);
		jx_set_int(j, "merges", (int64_t)s->merges);
		jx_set_int(j, "fallback_commits", (int64_t)s->fallback_commits);
		jx_set_int(j, "objects", (int64_t)s->objects);
		jx_set_int(j, "repo_bytes", (int64_t)s->repo_bytes);
		jx_set_real(j, "seconds", s->seconds);
		char *txt = jx_dumps(j);
		json_decref(j);
		if (!txt)
			return CLI_FAILED;
		puts(txt);
		free(txt);
		return CLI_OK;
	}
	printf("%s: head %s\n", o->out, s->head);
	printf("  %zu files, %zu test files, %zu tests, %zu functions and classes, %zu ops\n",
	       s->files, s->test_files, s->tests, s->src_functions, s->ops);
	printf("  %zu commits (%zu merges, %zu that a selector must answer with everything)\n",
	       s->commits, s->merges, s->fallback_commits);
	printf("  %zu objects, %.1f MiB under .git, %.2f s\n", s->objects,
	       (double)s->repo_bytes / (1024.0 * 1024.0), s->seconds);
	printf("  ground truth: %s/.ground_truth/commits.jsonl and tests.jsonl\n", o->out);
	return CLI_OK;
}

static int cmd_upstream(int argc, char **argv)
{
	struct fixture_opts o = { .scale = FIXTURE_SMALL };
	int json = 0, have_seed = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--json")) {
			json = 1;
			continue;
		}
		if (!strcmp(a, "--no-checkout")) {
			o.no_checkout = 1;
			continue;
		}
		if (!v)
			return cli_usage_error(self(), "unknown option or missing value: %s", a);
		i++;
		if (!strcmp(a, "--out")) {
			o.out = v;
		} else if (!strcmp(a, "--scale")) {
			if (fixture_scale_parse(&o.scale, v))
				return cli_usage_error(self(), "%s", err_last());
		} else if (!strcmp(a, "--seed")) {
			if (num_parse_u64(&o.seed, v, 0, UINT64_MAX))
				return cli_usage_error(self(), "--seed: %s", err_last());
			have_seed = 1;
		} else if (!strcmp(a, "--shapes")) {
			if (strcmp(v, "basic") && strcmp(v, "all"))
				return cli_usage_error(self(), "--shapes: basic or all, not '%s'",
						       v);
			o.shapes_basic = !strcmp(v, "basic");
		} else if (!strcmp(a, "--commits")) {
			if (num_parse_int(&o.commits, v, 1, FIXTURE_COMMITS_MAX))
				return cli_usage_error(self(), "--commits: %s", err_last());
		} else {
			return cli_usage_error(self(), "unknown option %s", a);
		}
	}
	if (!o.out)
		return cli_usage_error(self(), "upstream needs --out DIR");
	if (!have_seed)
		return cli_usage_error(self(),
				       "upstream needs --seed N (the same seed, the same ids)");
	struct fixture_stats s;
	int rc = fixture_generate(&o, &s);
	if (rc) {
		fprintf(stderr, "spyre-ci fixture upstream: %s\n", err_last());
		return rc == ERR_INVAL || rc == ERR_EXISTS ? CLI_USAGE : CLI_FAILED;
	}
	return print_stats(&o, &s, json);
}

int cmd_fixture_main(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error(self(), "expected an action: upstream");
	if (!strcmp(argv[1], "upstream"))
		return cmd_upstream(argc - 1, argv + 1);
	return cli_usage_error(self(), "unknown action '%s' (upstream)", argv[1]);
}

const char cmd_fixture_summary[] =
    "generate test material: a synthetic PyTorch-shaped upstream with its ground truth";

const char cmd_fixture_help[] =
    "Usage: spyre-ci fixture upstream --out DIR --seed N [--scale small|pytorch]\n"
    "                                 [--commits N] [--shapes basic|all] [--no-checkout]\n"
    "                                 [--json]\n"
    "\n"
    "Writes a git repository shaped like PyTorch, generated from a seed, and the ground truth\n"
    "of its history, so that test selection can be measured without real PyTorch code:\n"
    "  torch/            modules with functions and classes calling each other across modules,\n"
    "                    torch/__init__.py importing nearly everything, torch/nn/functional.py,\n"
    "                    torch/_decomp/decompositions.py (@register_decomposition(aten.x)),\n"
    "                    the op database (OpInfo, UnaryUfuncInfo, ... in op_db)\n"
    "  aten/             native_functions.yaml and the C++ kernels its entries dispatch to\n"
    "  test/             TestCase classes, device-generic classes, @ops(...) and @dtypes tests\n"
    "  spyre/specs/      a torch-spyre spec file naming some of the tests\n"
    "  setup.py, CMakeLists.txt, pyproject.toml, torch/csrc/ and c10/ C++, a submodule\n"
    "                    (third_party/pybind11, .gitmodules), test/run_test.py,\n"
    "                    test/conftest.py, two binary files\n"
    "The history edits function bodies, test bodies, test modules, op entries, native entries\n"
    "and kernels, build files (the submodule moves); it renames and deletes modules and\n"
    "merges side branches. About\n"
    "one ordinary commit in eleven also names a test in its message (\"Fixes TestX.test_y\",\n"
    "an instantiated name, \"Repro: python FILE -k NAME\"): that test is then affected. With\n"
    "every shape, call chains of 30 to 45 calls, diamonds (paths of different lengths that\n"
    "meet) and cycles (mutual recursion) have test files of their own, and commits edit their\n"
    "far end (chain_body, diamond_body, cycle_body).\n"
    "\n"
    "DIR/.ground_truth/ (not in the history) holds:\n"
    "  commits.jsonl  one line per commit: id, parents, kind, paths, edited, fallback\n"
    "                 (the selector must select everything), affected_all, and affected: the\n"
    "                 ids (test/x.py::Class::method) of the tests that truly depend on it\n"
    "  tests.jsonl    every test with the functions, classes and ops it depends on\n"
    "  variants.jsonl the tests of test/test_op_variants.py (every way PyTorch names an\n"
    "                 instantiated test) with their variants and @dtypes (all shapes only)\n"
    "  opinfos.jsonl  every op database entry: file, dtypes, sample function and the shapes\n"
    "                 it builds from S, M, L, XS (null: none literal)\n"
    "\n"
    "Options:\n"
    "  --out DIR       a new or empty directory\n"
    "  --seed N        the same seed (and scale and commits) gives the same commit ids\n"
    "  --scale S       small: ~400 files, ~2,000 tests, 100 commits (the default; seconds)\n"
    "                  pytorch: 21,000 files, 1,500 test files, ~60,000 tests, 3,000 commits\n"
    "  --commits N     the number of commits, merges included (default: the scale's)\n"
    "  --shapes S      all: tests reach what they use through helpers, aliases, re-exports,\n"
    "                  mixins, helper methods, decorators, partials, lambdas in tables, nested\n"
    "                  functions, constants and computed names, and the call-graph shapes\n"
    "                  above (the default); basic: by direct calls only, no call-graph shapes\n"
    "  --no-checkout   write the objects and refs only (faster); HEAD is refs/heads/main\n"
    "  --json          print the counts as JSON\n"
    "\n"
    "Exit codes: 0 written, 1 generation failed (I/O, libgit2), 2 bad usage or DIR not empty.\n"
    "\n"
    "Examples:\n"
    "  spyre-ci fixture upstream --out /tmp/up --seed 1\n"
    "  git -C /tmp/up log --oneline --graph | head\n"
    "  head -c 600 /tmp/up/.ground_truth/commits.jsonl\n"
    "  spyre-ci fixture upstream --out /tmp/pt --scale pytorch --seed 7 --no-checkout --json\n";
