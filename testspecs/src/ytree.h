/* A YAML document as a small tree built from libyaml's event API, every node located, with
 * every limit of common/limits.h enforced while the events arrive: document size, nesting
 * depth, scalar length, alias expansions and total nodes (aliases count the nodes they
 * expand to, so an alias bomb is refused). An alias points at its anchor's node (a DAG); the
 * schema walker then sees each alias as an expanded copy. Duplicate keys, tags PyYAML's
 * safe_load refuses and a second document are errors. Private to testspecs. */
#ifndef TESTSPECS_YTREE_H
#define TESTSPECS_YTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "testspecs/spec.h"

enum ynode_kind { YN_SCALAR = 1, YN_SEQ, YN_MAP };

struct ynode {
	enum ynode_kind kind;
	uint32_t line, col; /* 1-based */
	bool plain;         /* a plain (unquoted) scalar: may be null, a bool or a number */
	const char *text;   /* scalar text, NUL-terminated */
	size_t len;
	struct ynode **kids; /* sequence: items; mapping: key0, value0, key1, value1, ... */
	size_t n;            /* number of kids (2 x pairs for a mapping) */
	uint32_t height;     /* 1 for a scalar */
	size_t weight;       /* nodes in the expanded subtree */
};

/* Parses `text` into a tree allocated from `arena`. `*root` is NULL for a stream with no
 * document. On a problem, adds one located error to `diags` (file name `file`) and returns
 * ERR_INVAL (ERR_NOMEM when memory ran out). */
int ytree_parse(struct spec_arena *arena, const char *file, const char *text, size_t len,
		struct spec_diag_list *diags, struct ynode **root);

/* Whether a scalar is YAML's null (plain "", "~", "null", "Null", "NULL"). */
bool ynode_is_null(const struct ynode *n);

/* Writes a node as one line of flow YAML ("{low: 0, high: 10}", "[1, 2]", "\"a b\"") into a
 * string from `arena`. NULL when out of memory or longer than YAML_SCALAR_MAX. */
char *ynode_flow_text(struct spec_arena *arena, const struct ynode *n, size_t *len);

#endif
