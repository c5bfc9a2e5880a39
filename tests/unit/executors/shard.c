/* Shards: a partition of the cases with every test whole, longest first by recorded durations. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/err.h"
#include <string.h>

#include "executors/shard.h"

static struct exec_case cases[60];

static void make_cases(void)
{
	memset(cases, 0, sizeof(cases));
	for (int i = 0; i < 60; i++) {
		snprintf(cases[i].id, sizeof(cases[i].id), "%016x", i);
		/* 12 tests of 5 cases, interleaved */
		snprintf(cases[i].test_id, sizeof(cases[i].test_id), "test/t.py::T::test_%02d",
			 i % 12);
	}
}

Test(shard, parse)
{
	int i, n;
	cr_expect_eq(exec_shard_parse("2/4", &i, &n), 0);
	cr_expect(i == 2 && n == 4);
	cr_expect_neq(exec_shard_parse("0/4", &i, &n), 0);
	cr_expect_neq(exec_shard_parse("5/4", &i, &n), 0);
	cr_expect_neq(exec_shard_parse("2", &i, &n), 0);
	cr_expect_neq(exec_shard_parse("a/b", &i, &n), 0);
}

Test(shard, a_partition_with_tests_whole)
{
	make_cases();
	int owner[60];
	for (int s = 1; s <= 3; s++) {
		bool keep[60];
		cr_assert_eq(exec_shard_plan(cases, 60, NULL, 0, s, 3, keep, NULL), 0);
		for (int i = 0; i < 60; i++)
			if (keep[i])
				owner[i] = s;
	}
	bool seen[60] = { 0 };
	for (int s = 1; s <= 3; s++) {
		bool keep[60];
		exec_shard_plan(cases, 60, NULL, 0, s, 3, keep, NULL);
		for (int i = 0; i < 60; i++) {
			cr_expect(!(keep[i] && seen[i]), "case %d in two shards", i);
			seen[i] |= keep[i];
		}
	}
	for (int i = 0; i < 60; i++) {
		cr_expect(seen[i], "case %d in no shard", i);
		cr_expect_eq(owner[i], owner[i % 12], "a test's cases stay together");
	}
}

Test(shard, longest_first_by_history)
{
	make_cases();
	/* one long test: it gets a shard of its own, the other 11 share the rest */
	struct exec_duration d[] = { { "test/t.py::T::test_07", 100.0 } };
	double secs[2];
	bool keep[60];
	cr_assert_eq(exec_shard_plan(cases, 60, d, 1, 1, 2, keep, secs), 0);
	cr_expect_eq(secs[0], 100.0);
	cr_expect_float_eq(secs[1], 11 * 5 * EXEC_CASE_SECONDS, 1e-9);
	for (int i = 0; i < 60; i++)
		cr_expect_eq(keep[i], i % 12 == 7, "case %d", i);
}
