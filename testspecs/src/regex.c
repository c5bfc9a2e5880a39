/* Spec-name regular expressions on PCRE2 with Python `re` semantics (fullmatch); the differences
 * between the two dialects and how each is handled are listed in testspecs/regex.h. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "testspecs/regex.h"

struct spec_regex {
	char *pattern; /* as written */
	char *prefix;  /* literal prefix of every match, "" when none */
	pcre2_code *code;
	pcre2_match_context *mctx;
	pcre2_match_data *md; /* sized for the pattern; matching is single-threaded per set */
	int jit;
};

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Appends `s` (n bytes) to a growing string; ERR_NOMEM or ERR_LIMIT. */
static int out_put(char *out, size_t *len, size_t cap, const char *s, size_t n)
{
	if (*len + n >= cap)
		return err_set(ERR_LIMIT, "regex: translated pattern longer than %zu bytes", cap);
	memcpy(out + *len, s, n);
	*len += n;
	out[*len] = '\0';
	return 0;
}

/* `{,n}` at p (p[0] == '{'): returns the length of the digits after the comma when the whole
 * thing is `{,digits}`, else 0. */
static size_t brace_zero_min(const char *p)
{
	if (p[1] != ',' || !is_digit(p[2]))
		return 0;
	size_t i = 2;
	while (is_digit(p[i]))
		i++;
	return p[i] == '}' ? i - 2 : 0;
}

/* Rewrites the Python-only constructs into PCRE2 syntax (see regex.h). `out` holds `cap` bytes.
 * Escapes are copied whole so that `\\Z` (a backslash then Z) is left alone. */
static int translate(char *out, size_t cap, const char *pat)
{
	size_t len = 0;
	int rc = 0;
	out[0] = '\0';
	for (const char *p = pat; *p && rc == 0;) {
		if (p[0] == '\\' && p[1] == 'Z') {
			rc = out_put(out, &len, cap, "\\z", 2);
			p += 2;
		} else if (p[0] == '\\' && (p[1] == 'u' || p[1] == 'U')) {
			size_t want = p[1] == 'u' ? 4 : 8, i = 0;
			while (i < want && is_hex(p[2 + i]))
				i++;
			if (i != want)
				return err_set(ERR_INVAL,
					       "regex: incomplete \\%c escape at offset %zu", p[1],
					       (size_t)(p - pat));
			rc = out_put(out, &len, cap, "\\x{", 3);
			if (rc == 0)
				rc = out_put(out, &len, cap, p + 2, want);
			if (rc == 0)
				rc = out_put(out, &len, cap, "}", 1);
			p += 2 + want;
		} else if (p[0] == '\\' && p[1]) {
			rc = out_put(out, &len, cap, p, 2);
			p += 2;
		} else if (p[0] == '{' && brace_zero_min(p)) {
			size_t nd = brace_zero_min(p);
			rc = out_put(out, &len, cap, "{0,", 3);
			if (rc == 0)
				rc = out_put(out, &len, cap, p + 2, nd + 1);
			p += 3 + nd;
		} else {
			rc = out_put(out, &len, cap, p, 1);
			p++;
		}
	}
	return rc;
}

/* 1 when the pattern has a `|` outside any group or class: then no literal prefix applies. */
static int has_top_alternation(const char *p)
{
	int depth = 0, in_class = 0;
	for (; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
		} else if (in_class) {
			if (*p == ']')
				in_class = 0;
		} else if (*p == '[') {
			in_class = 1;
			if (p[1] == '^')
				p++;
			if (p[1] == ']')
				p++;
		} else if (*p == '(') {
			depth++;
		} else if (*p == ')') {
			depth--;
		} else if (*p == '|' && depth == 0) {
			return 1;
		}
	}
	return 0;
}

/* The literal text that starts every match: plain word characters up to the first
 * metacharacter, minus the last one when a quantifier follows it (`ab*` -> "a"). */
static int literal_prefix(char **out, const char *pat)
{
	size_t n = 0;
	if (!has_top_alternation(pat)) {
		while (pat[n] && strchr("\\^$.|?*+()[]{}", pat[n]) == NULL)
			n++;
		if (n > 0 && pat[n] && strchr("?*{", pat[n])) {
			n--; /* the quantified character, whole even when it is multi-byte UTF-8 */
			while (n > 0 && ((unsigned char)pat[n] & 0xC0) == 0x80)
				n--;
		}
	}
	*out = strndup(pat, n);
	return *out ? 0 : err_set(ERR_NOMEM, "regex: prefix");
}

static int compile(struct spec_regex *re, const char *pattern)
{
	char *tr = malloc(2 * SPEC_REGEX_PATTERN_MAX + 16);
	if (!tr)
		return err_set(ERR_NOMEM, "regex: translation buffer");
	int rc = translate(tr, 2 * SPEC_REGEX_PATTERN_MAX + 16, pattern);
	if (rc) {
		free(tr);
		return rc;
	}
	pcre2_compile_context *cctx = pcre2_compile_context_create(NULL);
	if (!cctx) {
		free(tr);
		return err_set(ERR_NOMEM, "regex: compile context");
	}
	pcre2_set_newline(cctx, PCRE2_NEWLINE_LF);
	int errcode = 0;
	PCRE2_SIZE erroff = 0;
	uint32_t opts = PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED | PCRE2_ENDANCHORED;
	re->code =
	    pcre2_compile((PCRE2_SPTR)tr, PCRE2_ZERO_TERMINATED, opts, &errcode, &erroff, cctx);
	pcre2_compile_context_free(cctx);
	int same_len = strlen(tr) == strlen(pattern);
	free(tr);
	if (!re->code) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(errcode, msg, sizeof msg);
		/* Offsets map back exactly unless a rewrite changed the length before them. */
		return err_set(ERR_INVAL, "regex '%s': %s at offset %zu%s", pattern, (char *)msg,
			       (size_t)erroff, same_len ? "" : " (of the translated pattern)");
	}
	re->jit = pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE) == 0;
	re->mctx = pcre2_match_context_create(NULL);
	re->md = pcre2_match_data_create_from_pattern(re->code, NULL);
	if (!re->mctx || !re->md)
		return err_set(ERR_NOMEM, "regex: match data");
	pcre2_set_match_limit(re->mctx, SPEC_REGEX_MATCH_LIMIT);
	pcre2_set_depth_limit(re->mctx, SPEC_REGEX_DEPTH_LIMIT);
	return 0;
}

int testspecs_regex_create(struct spec_regex **out, const char *pattern)
{
	*out = NULL;
	size_t n = strlen(pattern);
	if (n > SPEC_REGEX_PATTERN_MAX)
		return err_set(ERR_LIMIT, "regex: pattern of %zu bytes, more than %d", n,
			       SPEC_REGEX_PATTERN_MAX);
	struct spec_regex *re = calloc(1, sizeof *re);
	if (!re)
		return err_set(ERR_NOMEM, "regex: %zu bytes", sizeof *re);
	re->pattern = strdup(pattern);
	int rc = re->pattern ? 0 : err_set(ERR_NOMEM, "regex: pattern copy");
	if (rc == 0)
		rc = literal_prefix(&re->prefix, pattern);
	if (rc == 0)
		rc = compile(re, pattern);
	if (rc) {
		testspecs_regex_destroy(re);
		return rc;
	}
	*out = re;
	return 0;
}

int testspecs_regex_match(const struct spec_regex *re, const char *subject, size_t len)
{
	size_t plen = strlen(re->prefix);
	if (plen > len || memcmp(subject, re->prefix, plen) != 0)
		return 0;
	int rc = pcre2_match(re->code, (PCRE2_SPTR)subject, len, 0, 0, re->md, re->mctx);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
	    rc == PCRE2_ERROR_HEAPLIMIT)
		return err_set(ERR_LIMIT, "regex '%s': match limit hit on '%.*s'", re->pattern,
			       (int)(len > 200 ? 200 : len), subject);
	PCRE2_UCHAR msg[256];
	pcre2_get_error_message(rc, msg, sizeof msg);
	return err_set(ERR_INVAL, "regex '%s': %s", re->pattern, (char *)msg);
}

const char *testspecs_regex_pattern(const struct spec_regex *re)
{
	return re->pattern;
}

const char *testspecs_regex_literal_prefix(const struct spec_regex *re)
{
	return re->prefix;
}

void testspecs_regex_destroy(struct spec_regex *re)
{
	if (!re)
		return;
	pcre2_match_data_free(re->md);
	pcre2_match_context_free(re->mctx);
	pcre2_code_free(re->code);
	free(re->prefix);
	free(re->pattern);
	free(re);
}

/* Word characters beyond ASCII need Unicode tables: one shared compiled `\w+\n?` pattern. */
static int plain_unicode(const char *name)
{
	static struct spec_regex *word;
	if (!word && testspecs_regex_create(&word, "\\w+\\n?") != 0)
		return 0;
	return testspecs_regex_match(word, name, strlen(name)) == 1;
}

int testspecs_name_is_plain(const char *name)
{
	size_t i = 0;
	int ascii = 1;
	for (; name[i]; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c >= 0x80)
			ascii = 0;
		else if (!(c == '_' || is_digit((char)c) || (c >= 'a' && c <= 'z') ||
			   (c >= 'A' && c <= 'Z')) &&
			 !(c == '\n' && name[i + 1] == '\0' && i > 0))
			return 0;
	}
	if (i == 0)
		return 0;
	return ascii ? 1 : plain_unicode(name);
}
