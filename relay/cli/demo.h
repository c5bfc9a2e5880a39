/* `spyre-ci demo`'s sample upstream: generated once into STATE/upstream by the fixture
 * generator, with one spec entry made impossible to meet (below), and commits made on it while
 * the daemon watches. Private to cmd_demo.c and demo_upstream.c. */
#ifndef RELAY_DEMO_H
#define RELAY_DEMO_H

#include <stddef.h>

/* A test of the sample upstream the demo edits: its file (relative to the upstream) and its
 * method name. */
struct demo_test {
	char file[256];
	char cls[128];
	char name[128];
};

struct demo_upstream {
	char dir[4096];
	struct demo_test ordinary; /* edited by the ordinary change */
	struct demo_test broken;   /* its spec entry carries the impossible tolerance */
};

/* Generates STATE/upstream unless it is there, picks the two tests and (once) adds the broken
 * test's spec entry in a commit of its own. Says what it did on stdout. */
int demo_upstream_prepare(struct demo_upstream *u, const char *state);

/* Edits `t`'s body (one statement that changes on every run) and commits it with `message`;
 * the new commit's id in `id`. */
int demo_upstream_commit(struct demo_upstream *u, const struct demo_test *t, const char *message,
			 char id[41]);

#endif
