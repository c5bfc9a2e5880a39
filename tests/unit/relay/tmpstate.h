/* A state directory for one test of the daemon: made under /tmp, removed whole afterwards
 * (whatever the test left in it, subdirectories too). */
#ifndef TESTS_UNIT_RELAY_TMPSTATE_H
#define TESTS_UNIT_RELAY_TMPSTATE_H

#include <stddef.h>

/* /tmp/spyre-ci-TAG-XXXXXX into dir; fails the test when it cannot be made. */
void tmpstate_make(char *dir, size_t size, const char *tag);
void tmpstate_remove(const char *dir);

#endif
