/* Process death between any two durable steps of the SQLite outbox's sender (the cases are
 * crash_cases.c's, shared with the daemon's store-backed outbox). */
#include <criterion/criterion.h>

#include "outbox_cases.h"

OUTBOX_CRASH_TESTS(crash, &outbox_sqlite_impl)
