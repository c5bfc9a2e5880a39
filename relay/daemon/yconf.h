/* A small located YAML reader for the daemon's configuration: libyaml events in, a tree of
 * nodes out, each with its line and column, so that every configuration error can name
 * file:line:col. Configuration needs no anchors, aliases, tags or second documents, so all of
 * those are refused rather than expanded; size, depth, scalar length and node count are bounded
 * (common/limits.h). */
#ifndef RELAY_DAEMON_YCONF_H
#define RELAY_DAEMON_YCONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum yconf_kind { YCONF_SCALAR = 1, YCONF_SEQ, YCONF_MAP };

struct yconf_node {
	enum yconf_kind kind;
	uint32_t line, col; /* 1-based */
	bool plain;         /* an unquoted scalar (may be a number, a bool or null) */
	char *text;         /* scalar text, NUL-terminated; NULL for collections */
	size_t len;
	struct yconf_node **kids; /* sequence: items; mapping: key0, value0, key1, value1, ... */
	size_t n;
};

/* Parses `len` bytes of `text` (named `file` in errors). *out is NULL for an empty document.
 * ERR_INVAL / ERR_LIMIT with err_last() "file:line:col: what", or ERR_NOMEM. */
int yconf_parse(struct yconf_node **out, const char *file, const char *text, size_t len);

void yconf_free(struct yconf_node *n);

#endif
