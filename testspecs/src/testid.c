/* Upstream test-id parsing: path, class, method, and the device-generic suffixes (see
 * testspecs/testid.h). */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "testspecs/testid.h"

/* Longest first so that `_bfloat16` is not read as `_float16` and `float8_e4m3fnuz` not as
 * `float8_e4m3fn`. The first 16 are the schema's DtypeString; the float8 ones appear in upstream
 * method names. */
static const char *const dtype_names[] = {
	"float8_e4m3fnuz",
	"float8_e5m2fnuz",
	"float8_e4m3fn",
	"float8_e5m2",
	"complex128",
	"complex64",
	"complex32",
	"bfloat16",
	"float16",
	"float32",
	"float64",
	"uint16",
	"uint32",
	"uint64",
	"int16",
	"int32",
	"int64",
	"uint8",
	"int8",
	"bool",
	NULL,
};

const char *const *testspecs_dtype_names(void)
{
	return dtype_names;
}

int testspecs_dtype_known(const char *name)
{
	for (size_t i = 0; dtype_names[i]; i++)
		if (strcmp(name, dtype_names[i]) == 0)
			return 1;
	return 0;
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && memcmp(s + n - m, suffix, m) == 0;
}

static int copy(char *dst, size_t cap, const char *src, size_t n)
{
	if (n >= cap)
		return err_set(ERR_LIMIT, "test id: a part of %zu bytes", n);
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

/* Strips the class suffix PRIVATEUSE1 or DEVICE (capitals). 1 when one was stripped. */
static int strip_class_suffix(struct spec_test_id *id, const char *device)
{
	char upper[64];
	size_t n = strlen(device);
	if (n >= sizeof upper)
		n = sizeof upper - 1;
	for (size_t i = 0; i < n; i++)
		upper[i] =
		    (char)(device[i] >= 'a' && device[i] <= 'z' ? device[i] - 32 : device[i]);
	upper[n] = '\0';
	strcpy(id->base_cls, id->cls);
	const char *suf[] = { "PRIVATEUSE1", upper };
	for (size_t i = 0; i < 2; i++) {
		if (suf[i][0] && has_suffix(id->cls, suf[i])) {
			id->base_cls[strlen(id->cls) - strlen(suf[i])] = '\0';
			return 1;
		}
	}
	return 0;
}

/* Finds `_<device>` at the end of the stem, or `_<device>_<dtype>`; strips it and records both.
 * 1 when found. */
static int strip_method_suffix(struct spec_test_id *id, const char *device)
{
	const char *devs[] = { device, "privateuse1" };
	for (size_t d = 0; d < 2; d++) {
		char tail[128];
		snprintf(tail, sizeof tail, "_%s", devs[d]);
		if (has_suffix(id->stem, tail)) {
			id->stem[strlen(id->stem) - strlen(tail)] = '\0';
			snprintf(id->device, sizeof id->device, "%s", devs[d]);
			return 1;
		}
		for (size_t i = 0; dtype_names[i]; i++) {
			snprintf(tail, sizeof tail, "_%s_%s", devs[d], dtype_names[i]);
			if (has_suffix(id->stem, tail)) {
				id->stem[strlen(id->stem) - strlen(tail)] = '\0';
				snprintf(id->device, sizeof id->device, "%s", devs[d]);
				snprintf(id->dtype, sizeof id->dtype, "%s", dtype_names[i]);
				return 1;
			}
		}
	}
	return 0;
}

int testspecs_testid_parse(struct spec_test_id *out, const char *text, const char *device)
{
	memset(out, 0, sizeof *out);
	if (!device || !device[0])
		device = SPEC_DEVICE_DEFAULT;
	size_t len = strlen(text);
	if (len >= SPEC_TESTID_MAX)
		return err_set(ERR_LIMIT, "test id of %zu bytes, more than %d", len,
			       SPEC_TESTID_MAX - 1);
	const char *parts[8];
	size_t lens[8], n = 0;
	for (const char *p = text;;) {
		const char *sep = strstr(p, "::");
		if (n == 8)
			return err_set(ERR_INVAL, "test id '%s': more than 8 parts", text);
		parts[n] = p;
		lens[n] = sep ? (size_t)(sep - p) : strlen(p);
		if (lens[n] == 0)
			return err_set(ERR_INVAL, "test id '%s': empty part %zu", text, n + 1);
		n++;
		if (!sep)
			break;
		p = sep + 2;
	}
	/* The first part is a path when it names a file; nested classes keep the innermost. */
	size_t first = 0;
	int rc = 0;
	if (n > 1 && lens[0] > 3 && memcmp(parts[0] + lens[0] - 3, ".py", 3) == 0) {
		rc = copy(out->path, sizeof out->path, parts[0], lens[0]);
		first = 1;
	}
	if (rc == 0 && n - first >= 2)
		rc = copy(out->cls, sizeof out->cls, parts[n - 2], lens[n - 2]);
	if (rc == 0)
		rc = copy(out->method, sizeof out->method, parts[n - 1], lens[n - 1]);
	if (rc)
		return err_prefix("test id '%s'", text);
	strcpy(out->stem, out->method);
	int cls_generic = out->cls[0] ? strip_class_suffix(out, device) : 0;
	if (cls_generic || !out->cls[0])
		out->device_generic = strip_method_suffix(out, device) || cls_generic;
	return 0;
}

const char *testspecs_testid_op(const struct spec_test_id *id, size_t base_len)
{
	size_t n = strlen(id->stem);
	if (base_len + 1 >= n || id->stem[base_len] != '_')
		return NULL;
	return id->stem + base_len + 1;
}
