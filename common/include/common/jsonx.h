/* Small helpers around Jansson that make ownership explicit in their names:
 *  - jx_get_* return BORROWED values owned by the object (do not decref, do not keep past it);
 *  - jx_set_*_new and jx_append_new STEAL the reference passed in, even on failure;
 *  - jx_dumps and jx_loadb return NEW references / allocations the caller owns.
 * Lookups never fail loudly: a missing key or a wrong type gives NULL or the default. */
#ifndef COMMON_JSONX_H
#define COMMON_JSONX_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Borrowed lookups. A dotted path walks objects: jx_get(o, "pull_request.head.sha"). */
json_t *jx_get(const json_t *obj, const char *path);
const char *jx_get_str(const json_t *obj, const char *path);       /* NULL unless a string */
int jx_get_int(int64_t *out, const json_t *obj, const char *path); /* 0, or ERR_NOTFOUND/INVAL */
bool jx_get_bool(const json_t *obj, const char *path, bool dflt);

/* Steal `value` into obj[key]; 0 or ERR_NOMEM. A NULL value (a failed json_*() constructor)
 * is ERR_NOMEM, so `jx_set_new(o, "k", json_string(s))` needs no separate check. */
int jx_set_new(json_t *obj, const char *key, json_t *value);
int jx_append_new(json_t *arr, json_t *value);
/* Copies of C values. A NULL string sets JSON null. */
int jx_set_str(json_t *obj, const char *key, const char *s);
int jx_set_int(json_t *obj, const char *key, int64_t v);
int jx_set_real(json_t *obj, const char *key, double v);
int jx_set_bool(json_t *obj, const char *key, bool v);

/* Parses `len` bytes that must be one JSON value, refusing more than `max` bytes or nesting
 * deeper than JSON_DEPTH_MAX. NEW reference, or NULL with err_last() naming line and column. */
json_t *jx_loadb(const char *data, size_t len, size_t max);

/* Compact serialization with sorted keys (stable output for goldens). NEW allocation (free()),
 * or NULL on ERR_NOMEM. */
char *jx_dumps(const json_t *value);

#endif
