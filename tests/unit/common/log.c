/* Tests of common/log: formats, level filtering before formatting, redaction. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "common/buf.h"
#include "common/log.h"

static struct buf captured;

static void capture(const char *line, size_t len, void *ctx)
{
	(void)ctx;
	buf_append(&captured, line, len);
}

static void setup(void)
{
	buf_init(&captured, 1 << 20);
	log_set_sink(capture, NULL);
	log_set_level(LOG_INFO);
	log_set_format(LOG_FORMAT_LOGFMT);
}

static void teardown(void)
{
	log_set_sink(NULL, NULL);
	buf_finish(&captured);
}

TestSuite(log, .init = setup, .fini = teardown);

Test(log, logfmt_line_shape)
{
	log_info("job %d claimed by \"w1\"", 7);
	const char *s = buf_str(&captured);
	cr_expect(strncmp(s, "ts=", 3) == 0, "%s", s);
	cr_expect(strstr(s, " level=info ") != NULL, "%s", s);
	cr_expect(strstr(s, " src=tests/unit/common/log.c:") != NULL, "relative path: %s", s);
	cr_expect(strstr(s, " msg=\"job 7 claimed by \\\"w1\\\"\"\n") != NULL, "%s", s);
}

Test(log, json_lines_parse)
{
	log_set_format(LOG_FORMAT_JSON);
	log_warn("multi\nline\ttext \x01 end");
	json_error_t e;
	json_t *v = json_loads(buf_str(&captured), 0, &e);
	cr_assert_not_null(v, "not JSON: %s (%s)", buf_str(&captured), e.text);
	cr_expect_str_eq(json_string_value(json_object_get(v, "level")), "warn");
	cr_expect_str_eq(json_string_value(json_object_get(v, "msg")),
			 "multi\nline\ttext \x01 end");
	cr_expect(strncmp(json_string_value(json_object_get(v, "src")),
			  "tests/unit/common/log.c:", 24) == 0);
	json_decref(v);
}

static int formatted;

static int count_format(void)
{
	formatted++;
	return 1;
}

Test(log, level_checked_before_formatting)
{
	log_debug("never %d", count_format());
	cr_expect_eq(formatted, 0, "arguments of a disabled level are not evaluated");
	cr_expect_eq(captured.len, 0);
	log_set_level(LOG_DEBUG);
	log_debug("now %d", count_format());
	cr_expect_eq(formatted, 1);
	cr_expect_gt(captured.len, 0);
	log_set_level(LOG_SILENT);
	buf_reset(&captured);
	log_error("silenced");
	cr_expect_eq(captured.len, 0);
}

Test(log, level_names)
{
	enum log_level l;
	cr_expect_eq(log_level_parse(&l, "debug"), 0);
	cr_expect_eq(l, LOG_DEBUG);
	cr_expect_eq(log_level_parse(&l, "warning"), 0);
	cr_expect_eq(l, LOG_WARN);
	cr_expect_neq(log_level_parse(&l, "loud"), 0);
	cr_expect_str_eq(log_level_name(LOG_TRACE), "trace");
}

static void expect_redacted(const char *in, const char *want)
{
	char out[512];
	log_redact(out, sizeof(out), in);
	cr_expect_str_eq(out, want, "in: %s", in);
}

Test(log, secrets_redacted)
{
	expect_redacted("Authorization: Bearer abc.def-123 sent",
			"Authorization: Bearer [redacted] sent");
	expect_redacted("using bearer XYZ", "using bearer [redacted]");
	expect_redacted("token=s3cr3t&x=1", "token=[redacted]&x=1");
	expect_redacted("{\"webhook_secret\":\"hunter2\",\"a\":1}",
			"{\"webhook_secret\":\"[redacted]\",\"a\":1}");
	expect_redacted("password: pw1 user=bob", "password: [redacted] user=bob");
	expect_redacted(
	    "sig sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
	    "sig sha256=[redacted]");
	expect_redacted("pat ghp_abcdefghijklmnopqrstuvwxyz0123456789 end", "pat [redacted] end");
	expect_redacted("job 12 done in 3 ms, sha=abc123", "job 12 done in 3 ms, sha=abc123");
	expect_redacted("tokens=5 ok", "tokens=[redacted] ok"); /* erring on the safe side */
}

Test(log, redaction_reaches_the_line)
{
	log_error("posting with token=abcdef");
	cr_expect(strstr(buf_str(&captured), "abcdef") == NULL, "%s", buf_str(&captured));
	cr_expect(strstr(buf_str(&captured), "token=[redacted]") != NULL);
}

Test(log, overlong_message_is_cut)
{
	static char big[20000];
	memset(big, 'a', sizeof(big) - 1);
	log_info("%s", big);
	cr_expect_lt(captured.len, 10000);
	cr_expect(strstr(buf_str(&captured), "...\"\n") != NULL);
}

Test(log, redact_respects_small_buffers)
{
	char out[8];
	log_redact(out, sizeof(out), "token=abcdefgh");
	cr_expect_eq(strlen(out), 7);
}
