/* The soft assertion behind CHECK(): log, then abort in debug builds only. */
#include "common/check.h"

#include <stdlib.h>

#include "common/log.h"

bool check__fail(const char *expr, const char *file, int line)
{
	log__write(LOG_ERROR, file, line, "internal check failed: %s", expr);
#ifndef NDEBUG
	abort();
#endif
	return false;
}
