/* The Python scanner's tokenizer: bytes to logical lines of tokens (names, numbers, strings,
 * operators), with the indentation of each line. Comments, blank lines, backslash continuations
 * and newlines inside brackets never end a logical line. Strings of every shape are one token:
 * single and triple quotes, prefixes (r, b, u, f, t and pairs), f-strings whose replacement
 * fields hold nested strings, brackets and format specs. LF, CRLF and CR all end a line.
 * Errors (an unterminated string, a stray closing bracket, an unclosed bracket before a `def`)
 * become warnings and the tokenizer picks up where the next statement plausibly starts. */
#include <string.h>

#include "common/err.h"
#include "scan_internal.h"

static bool is_name_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_name_char(unsigned char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

/* Length of the line end at pos (1 or 2), 0 when there is none. */
static size_t eol_len(const struct lexer *lx, size_t pos)
{
	if (pos >= lx->len)
		return 0;
	if (lx->d[pos] == '\n')
		return 1;
	if (lx->d[pos] == '\r')
		return (pos + 1 < lx->len && lx->d[pos + 1] == '\n') ? 2 : 1;
	return 0;
}

/* A string prefix: one or two of r, b, u, f, t (any case), not both b and f. */
static bool is_prefix(const char *s, size_t n, bool *raw, bool *fmt)
{
	if (n == 0 || n > 2)
		return false;
	*raw = false;
	*fmt = false;
	bool bytes = false;
	for (size_t i = 0; i < n; i++) {
		switch (s[i] | 0x20) {
		case 'r':
			*raw = true;
			break;
		case 'b':
			bytes = true;
			break;
		case 'u':
			if (n != 1)
				return false;
			break;
		case 'f':
		case 't':
			*fmt = true;
			break;
		default:
			return false;
		}
	}
	if (n == 2 && s[0] == s[1])
		return false;
	return !(bytes && *fmt);
}

static size_t lex_string(struct lexer *lx, size_t pos, bool raw, bool fmt, int depth);

/* pos is after a backslash inside a string: skips the escaped byte (a line end counts). */
static size_t skip_escape(struct lexer *lx, size_t pos)
{
	size_t e = eol_len(lx, pos);
	if (e) {
		lx->line++;
		return pos + e;
	}
	return pos < lx->len ? pos + 1 : pos;
}

static bool at_close(const struct lexer *lx, size_t pos, char q, bool triple)
{
	if (lx->d[pos] != q)
		return false;
	if (!triple)
		return true;
	return pos + 2 < lx->len && lx->d[pos + 1] == q && lx->d[pos + 2] == q;
}

static size_t lex_fstring_field(struct lexer *lx, size_t pos, char q, bool triple, int depth);

/* An f-string's format spec after ':': literal text with nested {fields}; returns after '}'. */
static size_t lex_fstring_spec(struct lexer *lx, size_t pos, char q, bool triple, int depth)
{
	while (pos < lx->len) {
		char c = lx->d[pos];
		if (c == '}')
			return pos + 1;
		if (at_close(lx, pos, q, triple))
			return pos;
		size_t e = eol_len(lx, pos);
		if (e) {
			if (!triple)
				return pos;
			lx->line++;
			pos += e;
		} else if (c == '{') {
			pos = lex_fstring_field(lx, pos + 1, q, triple, depth + 1);
		} else {
			pos++;
		}
	}
	return pos;
}

/* A replacement field after '{': an expression with brackets and nested strings, then an
 * optional !conversion and :spec; returns after the closing '}'. */
static size_t lex_fstring_field(struct lexer *lx, size_t pos, char q, bool triple, int depth)
{
	if (depth > SCAN_FSTRING_DEPTH_MAX) {
		scan__warn(lx->st, lx->line, "f-strings nested deeper than %d",
			   SCAN_FSTRING_DEPTH_MAX);
		return pos;
	}
	int brackets = 0;
	while (pos < lx->len) {
		unsigned char c = (unsigned char)lx->d[pos];
		size_t e = eol_len(lx, pos);
		if (e) {
			if (!triple)
				return pos; /* the caller reports the unterminated string */
			lx->line++;
			pos += e;
			continue;
		}
		if (c == '}' && brackets <= 0)
			return pos + 1;
		if (c == '(' || c == '[' || c == '{')
			brackets++;
		else if (c == ')' || c == ']' || c == '}')
			brackets--;
		if (c == ':' && brackets <= 0)
			return lex_fstring_spec(lx, pos + 1, q, triple, depth);
		if (c == '\'' || c == '"') {
			pos = lex_string(lx, pos, false, false, depth + 1);
			continue;
		}
		if (is_name_start(c)) {
			size_t s = pos;
			while (pos < lx->len && is_name_char((unsigned char)lx->d[pos]))
				pos++;
			bool raw, fmt;
			if (pos < lx->len && (lx->d[pos] == '\'' || lx->d[pos] == '"') &&
			    is_prefix(lx->d + s, pos - s, &raw, &fmt))
				pos = lex_string(lx, pos, raw, fmt, depth + 1);
			continue;
		}
		if (c == '\\') {
			pos = skip_escape(lx, pos + 1);
			continue;
		}
		pos++;
	}
	return pos;
}

/* A string whose opening quote is at pos; returns the position after its closing quote. */
static size_t lex_string(struct lexer *lx, size_t pos, bool raw, bool fmt, int depth)
{
	char q = lx->d[pos];
	uint32_t start_line = lx->line;
	bool triple = pos + 2 < lx->len && lx->d[pos + 1] == q && lx->d[pos + 2] == q;
	pos += triple ? 3 : 1;
	while (pos < lx->len) {
		char c = lx->d[pos];
		if (at_close(lx, pos, q, triple))
			return pos + (triple ? 3 : 1);
		size_t e = eol_len(lx, pos);
		if (e) {
			if (!triple) {
				scan__warn(lx->st, start_line, "unterminated string");
				return pos;
			}
			lx->line++;
			pos += e;
		} else if (c == '\\') {
			/* raw strings too: a backslash keeps the quote after it in the string */
			(void)raw;
			pos = skip_escape(lx, pos + 1);
		} else if (fmt && c == '{') {
			if (pos + 1 < lx->len && lx->d[pos + 1] == '{')
				pos += 2;
			else
				pos = lex_fstring_field(lx, pos + 1, q, triple, depth);
		} else {
			pos++;
		}
	}
	scan__warn(lx->st, start_line, "unterminated %sstring", triple ? "triple-quoted " : "");
	return pos;
}

static const char *const ops3[] = { "**=", "//=", ">>=", "<<=", "...", NULL };
static const char *const ops2[] = { "->", ":=", "==", "!=", "<=", ">=", "**", "//", "<<", ">>",
				    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", NULL };

static size_t op_len(const struct lexer *lx, size_t pos)
{
	size_t left = lx->len - pos;
	for (int i = 0; left >= 3 && ops3[i]; i++)
		if (memcmp(lx->d + pos, ops3[i], 3) == 0)
			return 3;
	for (int i = 0; left >= 2 && ops2[i]; i++)
		if (memcmp(lx->d + pos, ops2[i], 2) == 0)
			return 2;
	return 1;
}

static int push_tok(struct lexer *lx, struct lline *ll, enum tok_kind kind, size_t off, size_t len,
		    uint32_t line)
{
	if (ll->n == ll->cap) {
		struct tok *t = scan__grow(ll->toks, ll->n, &ll->cap, sizeof(*t));
		if (!t)
			return lx->err = err_set(ERR_NOMEM, "scan: out of memory for tokens");
		ll->toks = t;
	}
	struct tok *t = &ll->toks[ll->n++];
	t->off = (uint32_t)off;
	t->len = (uint32_t)len;
	t->line = line;
	t->kind = (uint8_t)kind;
	t->op = kind == TOK_OP ? lx->d[off] : 0;
	t->match = -1;
	return 0;
}

static void bracket_open(struct lexer *lx, struct lline *ll)
{
	if (lx->depth >= SCAN_BRACKET_DEPTH_MAX) {
		scan__warn(lx->st, lx->line, "brackets nested deeper than %d",
			   SCAN_BRACKET_DEPTH_MAX);
		return;
	}
	lx->stack[lx->depth] = ll->toks[ll->n - 1].op;
	lx->stack_line[lx->depth] = lx->line;
	lx->open_idx[lx->depth] = (int32_t)(ll->n - 1);
	lx->depth++;
}

static void bracket_close(struct lexer *lx, struct lline *ll, char c)
{
	char want = c == ')' ? '(' : c == ']' ? '[' : '{';
	size_t k = lx->depth;
	while (k > 0 && lx->stack[k - 1] != want)
		k--;
	if (k == 0) {
		scan__warn(lx->st, lx->line, "'%c' closes no bracket", c);
		return;
	}
	if (k != lx->depth)
		scan__warn(lx->st, lx->line, "'%c' closes '%c' opened at line %u", c,
			   lx->stack[lx->depth - 1], lx->stack_line[lx->depth - 1]);
	lx->depth = k - 1;
	ll->toks[lx->open_idx[lx->depth]].match = (int32_t)(ll->n - 1);
}

/* At the start of a physical line inside brackets: a `def`, `class` or `import` there cannot be
 * part of an expression, so an earlier bracket was never closed. */
static bool resync_here(const struct lexer *lx, size_t pos)
{
	static const char *const words[] = { "def", "class", "import", "async", NULL };
	for (int i = 0; words[i]; i++) {
		size_t n = strlen(words[i]);
		if (pos + n < lx->len && memcmp(lx->d + pos, words[i], n) == 0 &&
		    (lx->d[pos + n] == ' ' || lx->d[pos + n] == '\t'))
			return true;
	}
	return false;
}

/* Columns of indentation at pos (a physical line's start); moves pos past it. */
static uint32_t indentation(const struct lexer *lx, size_t *pos)
{
	uint32_t col = 0;
	size_t p = *pos;
	for (; p < lx->len; p++) {
		char c = lx->d[p];
		if (c == ' ')
			col++;
		else if (c == '\t')
			col = (col / 8 + 1) * 8;
		else if (c == '\f')
			col = 0;
		else
			break;
	}
	*pos = p;
	return col;
}

static int lex_token(struct lexer *lx, struct lline *ll)
{
	size_t pos = lx->pos;
	unsigned char c = (unsigned char)lx->d[pos];
	uint32_t line = lx->line;
	if (is_name_start(c)) {
		while (pos < lx->len && is_name_char((unsigned char)lx->d[pos]))
			pos++;
		bool raw, fmt;
		if (pos < lx->len && (lx->d[pos] == '\'' || lx->d[pos] == '"') &&
		    is_prefix(lx->d + lx->pos, pos - lx->pos, &raw, &fmt)) {
			size_t end = lex_string(lx, pos, raw, fmt, 0);
			int rc = push_tok(lx, ll, TOK_STRING, lx->pos, end - lx->pos, line);
			lx->pos = end;
			return rc;
		}
		int rc = push_tok(lx, ll, TOK_NAME, lx->pos, pos - lx->pos, line);
		lx->pos = pos;
		return rc;
	}
	if ((c >= '0' && c <= '9') ||
	    (c == '.' && pos + 1 < lx->len && lx->d[pos + 1] >= '0' && lx->d[pos + 1] <= '9')) {
		pos++;
		while (pos < lx->len) {
			char d = lx->d[pos];
			if (is_name_char((unsigned char)d) || d == '.')
				pos++;
			else if ((d == '+' || d == '-') && (lx->d[pos - 1] | 0x20) == 'e' &&
				 !((lx->d[lx->pos + 1] | 0x20) == 'x'))
				pos++;
			else
				break;
		}
		int rc = push_tok(lx, ll, TOK_NUMBER, lx->pos, pos - lx->pos, line);
		lx->pos = pos;
		return rc;
	}
	if (c == '\'' || c == '"') {
		size_t end = lex_string(lx, pos, false, false, 0);
		int rc = push_tok(lx, ll, TOK_STRING, lx->pos, end - lx->pos, line);
		lx->pos = end;
		return rc;
	}
	size_t n = op_len(lx, pos);
	if (n == 1 && (c == '$' || c == '?' || c == '`' || c == '!' || c < 0x20 || c == 0x7f))
		scan__warn(lx->st, line, "unexpected character 0x%02x", c);
	if (push_tok(lx, ll, TOK_OP, pos, n, line))
		return lx->err;
	lx->pos = pos + n;
	if (n == 1 && (c == '(' || c == '[' || c == '{'))
		bracket_open(lx, ll);
	else if (n == 1 && (c == ')' || c == ']' || c == '}'))
		bracket_close(lx, ll, (char)c);
	return 0;
}

int scan__lex_next(struct lexer *lx, struct lline *ll)
{
	ll->n = 0;
	lx->depth = 0;
	bool line_start = true;
	while (lx->pos <= lx->len) {
		if (line_start) {
			size_t p = lx->pos;
			uint32_t col = indentation(lx, &p);
			if (ll->n == 0) {
				if (p >= lx->len)
					return 0;
				if (lx->d[p] == '#' || eol_len(lx, p)) {
					lx->pos = p; /* blank or comment-only line */
				} else {
					ll->indent = col;
					ll->first_line = lx->line;
					lx->pos = p;
				}
			} else if (lx->depth > 0 && resync_here(lx, p)) {
				scan__warn(lx->st, lx->stack_line[lx->depth - 1],
					   "'%c' never closed (picked up again at line %u)",
					   lx->stack[lx->depth - 1], lx->line);
				ll->last_line = lx->line - 1;
				return 1;
			} else {
				lx->pos = p;
			}
			line_start = false;
		}
		while (lx->pos < lx->len &&
		       (lx->d[lx->pos] == ' ' || lx->d[lx->pos] == '\t' || lx->d[lx->pos] == '\f'))
			lx->pos++;
		if (lx->pos >= lx->len) {
			if (lx->depth > 0)
				scan__warn(lx->st, lx->stack_line[lx->depth - 1],
					   "'%c' never closed", lx->stack[lx->depth - 1]);
			ll->last_line = lx->line;
			if (lx->len > 0 && eol_len(lx, lx->len - 1) &&
			    ll->last_line > ll->first_line)
				ll->last_line--; /* a string ran to the end, past the last newline
						  */
			return ll->n > 0;
		}
		char c = lx->d[lx->pos];
		if (c == '#') {
			while (lx->pos < lx->len && !eol_len(lx, lx->pos))
				lx->pos++;
			continue;
		}
		size_t e = eol_len(lx, lx->pos);
		if (e) {
			lx->pos += e;
			lx->line++;
			line_start = true;
			if (ll->n > 0 && lx->depth == 0) {
				ll->last_line = lx->line - 1;
				return 1;
			}
			continue;
		}
		if (c == '\\' && eol_len(lx, lx->pos + 1)) {
			lx->pos += 1 + eol_len(lx, lx->pos + 1);
			lx->line++;
			continue;
		}
		if (lex_token(lx, ll))
			return lx->err;
	}
	return ll->n > 0;
}
