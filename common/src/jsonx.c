/* Jansson helpers with explicit ownership; see jsonx.h. */
#include "common/jsonx.h"

#include <string.h>

#include "common/err.h"
#include "common/limits.h"

json_t *jx_get(const json_t *obj, const char *path)
{
	const json_t *cur = obj;
	const char *p = path;
	while (cur && *p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (!json_is_object(cur))
			return NULL;
		cur = json_object_getn(cur, p, n);
		p += n;
		if (*p == '.')
			p++;
	}
	return (json_t *)cur;
}

const char *jx_get_str(const json_t *obj, const char *path)
{
	return json_string_value(jx_get(obj, path));
}

int jx_get_int(int64_t *out, const json_t *obj, const char *path)
{
	json_t *v = jx_get(obj, path);
	if (!v)
		return err_set(ERR_NOTFOUND, "no key %s", path);
	if (!json_is_integer(v))
		return err_set(ERR_INVAL, "%s is not an integer", path);
	*out = (int64_t)json_integer_value(v);
	return 0;
}

bool jx_get_bool(const json_t *obj, const char *path, bool dflt)
{
	json_t *v = jx_get(obj, path);
	return json_is_boolean(v) ? json_is_true(v) : dflt;
}

int jx_set_new(json_t *obj, const char *key, json_t *value)
{
	if (!value)
		return err_set(ERR_NOMEM, "out of memory building JSON for %s", key);
	/* json_object_set_new steals `value`, on failure too. */
	if (json_object_set_new(obj, key, value) != 0)
		return err_set(ERR_NOMEM, "cannot set JSON key %s", key);
	return 0;
}

int jx_append_new(json_t *arr, json_t *value)
{
	if (!value)
		return err_set(ERR_NOMEM, "out of memory building a JSON array item");
	/* json_array_append_new steals `value`, on failure too. */
	if (json_array_append_new(arr, value) != 0)
		return err_set(ERR_NOMEM, "cannot append to a JSON array");
	return 0;
}

int jx_set_str(json_t *obj, const char *key, const char *s)
{
	return jx_set_new(obj, key, s ? json_string(s) : json_null());
}

int jx_set_int(json_t *obj, const char *key, int64_t v)
{
	return jx_set_new(obj, key, json_integer((json_int_t)v));
}

int jx_set_real(json_t *obj, const char *key, double v)
{
	return jx_set_new(obj, key, json_real(v));
}

int jx_set_bool(json_t *obj, const char *key, bool v)
{
	return jx_set_new(obj, key, json_boolean(v));
}

/* Jansson has no depth limit of its own: check nesting on the raw text first (strings are
 * skipped so that brackets inside them do not count). */
static int depth_ok(const char *data, size_t len, size_t *where)
{
	int depth = 0;
	int in_str = 0;
	for (size_t i = 0; i < len; i++) {
		char c = data[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '[' || c == '{') {
			if (++depth > JSON_DEPTH_MAX) {
				*where = i;
				return 0;
			}
		} else if (c == ']' || c == '}') {
			depth--;
		}
	}
	return 1;
}

json_t *jx_loadb(const char *data, size_t len, size_t max)
{
	if (len > max) {
		err_set(ERR_LIMIT, "JSON document of %zu bytes is larger than the limit of %zu",
			len, max);
		return NULL;
	}
	size_t where = 0;
	if (!depth_ok(data, len, &where)) {
		err_set(ERR_LIMIT, "JSON nests deeper than %d levels (at byte %zu)", JSON_DEPTH_MAX,
			where);
		return NULL;
	}
	json_error_t jerr;
	json_t *v = json_loadb(data, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (!v)
		err_set(ERR_INVAL, "JSON error at line %d, column %d: %s", jerr.line, jerr.column,
			jerr.text);
	return v;
}

char *jx_dumps(const json_t *value)
{
	char *s = json_dumps(value, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	if (!s)
		err_set(ERR_NOMEM, "cannot serialize JSON");
	return s;
}
