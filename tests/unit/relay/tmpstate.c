/* Test state directories (tmpstate.h). */
#include "tmpstate.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "gitrepo.h"

void tmpstate_make(char *dir, size_t size, const char *tag)
{
	cr_assert_lt((size_t)snprintf(dir, size, "/tmp/spyre-ci-%s-XXXXXX", tag), size);
	cr_assert_not_null(mkdtemp(dir), "mkdtemp %s", dir);
}

void tmpstate_remove(const char *dir)
{
	if (dir[0])
		test_rm_tree(dir);
}
