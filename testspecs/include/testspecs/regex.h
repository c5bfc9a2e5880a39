/* Spec-name regular expressions: the names in a spec's `tests[].names` that are not plain
 * identifiers are Python `re` patterns, matched against the WHOLE name (re.fullmatch). This
 * compiles them with PCRE2 (UTF + UCP, anchored at both ends, a match limit so a pathological
 * pattern cannot hang, JIT where available) after translating the few constructs where Python
 * and PCRE2 disagree:
 *   - `\Z` is end of string in Python, "end or before a final newline" in PCRE: becomes `\z`.
 *   - `\uXXXX` and `\UXXXXXXXX` (Python escapes) become `\x{...}`; PCRE2 rejects `\u`.
 *   - `{,n}` means {0,n} in Python; PCRE2 10.42 reads it as literal text: becomes `{0,n}`.
 *   - `$` without MULTILINE matches at the end or before a final "\n" in both; with
 *     ENDANCHORED the match must still end at the end of the subject, as fullmatch requires.
 *   - `.` stops at "\n" only (PCRE2_NEWLINE_LF set explicitly, as in Python).
 *   - `(?P<name>...)`, `(?P=name)`, `\A`, `\b`, `\d`, `\w`, `\s` (Unicode, as Python 3 str
 *     patterns) mean the same in both.
 * PCRE2 accepts some constructs Python refuses (possessive quantifiers on old Pythons, inline
 * flags in the middle of a pattern); such a pattern is accepted here, never misread.
 *
 * torch-spyre (tests/spyre_test_matching.py, MatchSet) itself calls re.match, which anchors at the
 * start only; the format as docs/specs.md states it takes the whole name, as we do. The two differ
 * only for a pattern that matches a strict prefix of a name (`test_add` as a regex `test_a.d`
 * against `test_add_x`); docs/specs.md notes it. */
#ifndef TESTSPECS_REGEX_H
#define TESTSPECS_REGEX_H

#include <stddef.h>

#define SPEC_REGEX_PATTERN_MAX 4096   /* bytes of one pattern, before translation */
#define SPEC_REGEX_MATCH_LIMIT 100000 /* PCRE2 match limit: backtracking steps per match */
#define SPEC_REGEX_DEPTH_LIMIT 10000  /* PCRE2 depth limit */

struct spec_regex;

/* 1 when `name` is a plain identifier, as torch-spyre decides it (re.match(r"\w+$", name)):
 * one or more word characters (Unicode letters, digits, underscore), optionally followed by a
 * single final "\n". A plain name is compared with strcmp, never compiled. */
int testspecs_name_is_plain(const char *name);

/* Compiles `pattern` for whole-name matching. On a syntax error: ERR_INVAL with the offset (in
 * the original pattern when it can be mapped back) and PCRE2's message in err_last(). */
int testspecs_regex_create(struct spec_regex **out, const char *pattern);

/* 1 when the whole of `subject` (len bytes) matches, 0 when not, ERR_LIMIT when the match limit
 * was hit (the pattern is pathological for this subject), ERR_INVAL for a subject that is not
 * valid UTF-8. */
int testspecs_regex_match(const struct spec_regex *re, const char *subject, size_t len);

/* The pattern as written. */
const char *testspecs_regex_pattern(const struct spec_regex *re);

/* The literal text every match must start with ("LxPlanning" for `LxPlanning.*`), or "" when
 * there is none; used to index patterns by prefix. Conservative: stops at any metacharacter. */
const char *testspecs_regex_literal_prefix(const struct spec_regex *re);

void testspecs_regex_destroy(struct spec_regex *re);

#endif
