/* Tests of CHECK(): true passes through silently; false aborts in debug builds. */
#include <criterion/criterion.h>
#include <signal.h>

#include "common/check.h"
#include "common/log.h"

Test(check, true_is_silent)
{
	int x = 1;
	cr_expect(CHECK(x == 1));
}

#ifndef NDEBUG
Test(check, false_aborts_in_debug, .signal = SIGABRT)
{
	log_set_level(LOG_SILENT);
	int x = 1;
	(void)CHECK(x == 2);
}
#endif
