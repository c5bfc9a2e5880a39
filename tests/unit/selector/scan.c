/* Unit tests of the Python scanner. */
#include <criterion/criterion.h>
#include <string.h>

#include "selector/scan.h"

Test(scan, empty_file)
{
	struct scan_file *f = NULL;
	cr_assert_eq(selector_scan(&f, "x.py", NULL, "", 0), 0);
	cr_assert_eq(f->n_functions, 0);
	scan_file_destroy(f);
}
