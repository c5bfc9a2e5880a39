/* Stage 2's message signal, its tokenizer: which words of a commit message may name tests, and
 * in which form (impact.h, enum impact_message_form). Only [A-Za-z0-9_./:-] make words, so
 * backticks, quotes, brackets, markdown and any byte outside ASCII separate them; a word is
 * trimmed of the punctuation that ends a sentence. Bounded: the bytes read, the tokens kept,
 * the length of one word. The matcher against the head catalog is impact_message.c. */
#include <stdbool.h>
#include <string.h>

#include "common/limits.h"
#include "selector/impact.h"

const char *selector_impact_message_form_name(enum impact_message_form f)
{
	static const char *const names[] = { "full id", "path::Class", "Class.method", "file",
					     "-k",      "bare name",   "class" };
	return (unsigned)f < sizeof(names) / sizeof(names[0]) ? names[f] : "?";
}

static bool alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool alnum(char c)
{
	return alpha(c) || (c >= '0' && c <= '9');
}

static bool word_char(char c)
{
	return alnum(c) || c == '.' || c == '/' || c == ':' || c == '-';
}

static bool ident(const char *s, size_t n)
{
	if (n == 0 || !alpha(s[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!alnum(s[i]))
			return false;
	return true;
}

static bool prefix(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);
	return n >= k && memcmp(s, p, k) == 0;
}

static bool suffix(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);
	return n >= k && memcmp(s + n - k, p, k) == 0;
}

static const char *find(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(s + i, p, k) == 0)
			return s + i;
	return NULL;
}

/* A test file's path: ends in .py, its last component starts with "test", no ':'. */
static bool test_path(const char *s, size_t n)
{
	if (!suffix(s, n, ".py") || memchr(s, ':', n))
		return false;
	const char *b = s + n;
	while (b > s && b[-1] != '/')
		b--;
	return prefix(b, (size_t)(s + n - b), "test");
}

/* A test method's or function's name as pytest collects it. */
static bool test_name(const char *s, size_t n)
{
	return ident(s, n) && prefix(s, n, "test");
}

/* A class as PyTorch names them: TestFoo, FooTest; an identifier starting upper case. */
static bool class_name(const char *s, size_t n)
{
	return ident(s, n) && s[0] >= 'A' && s[0] <= 'Z';
}

/* A bare class word: TestFoo, TestFooCUDA, not Testing. */
static bool test_class(const char *s, size_t n)
{
	return n > 4 && prefix(s, n, "Test") && ident(s, n) && !(s[4] >= 'a' && s[4] <= 'z');
}

/* "path::A::B", "path::A", "A::B". */
static bool classify_colons(struct impact_message_token *t, const char *s, size_t n)
{
	const char *parts[4];
	size_t lens[4], np = 0;
	const char *p = s, *end = s + n;
	while (np < 4) {
		const char *c = find(p, (size_t)(end - p), "::");
		parts[np] = p;
		lens[np++] = (size_t)((c ? c : end) - p);
		if (!c)
			break;
		p = c + 2;
	}
	if (np == 4 || (np == 3 && !test_path(parts[0], lens[0])))
		return false; /* nested classes, C++ names: not a test id */
	if (test_path(parts[0], lens[0])) {
		t->path = parts[0];
		t->path_n = lens[0];
		if (!class_name(parts[1], lens[1]) && !test_name(parts[1], lens[1]))
			return false;
		if (np == 2) {
			t->form = IMPACT_FORM_PATH_CLASS;
			t->cls = parts[1];
			t->cls_n = lens[1];
			return true;
		}
		if (!test_name(parts[2], lens[2]))
			return false;
		t->form = IMPACT_FORM_FULL_ID;
	} else if (class_name(parts[0], lens[0]) && test_name(parts[1], lens[1])) {
		t->form = IMPACT_FORM_CLASS_METHOD;
	} else {
		return false;
	}
	t->cls = parts[np - 2];
	t->cls_n = lens[np - 2];
	t->name = parts[np - 1];
	t->name_n = lens[np - 1];
	return true;
}

/* Classifies one trimmed word; false when it names no test. */
static bool classify(struct impact_message_token *t, const char *s, size_t n)
{
	*t = (struct impact_message_token){ .s = s, .n = n };
	if (find(s, n, "://"))
		return false; /* a URL */
	if (find(s, n, "::"))
		return classify_colons(t, s, n);
	if (test_path(s, n)) {
		t->form = IMPACT_FORM_FILE;
		t->path = s;
		t->path_n = n;
		return true;
	}
	if (memchr(s, '/', n) || memchr(s, ':', n))
		return false;
	const char *dot = s + n;
	while (dot > s && dot[-1] != '.')
		dot--;
	if (dot-- > s) { /* Class.method, module.Class.method */
		const char *name = dot + 1, *cls = dot;
		while (cls > s && cls[-1] != '.')
			cls--;
		size_t name_n = (size_t)(s + n - name), cls_n = (size_t)(dot - cls);
		if (test_class(name, name_n)) { /* (__main__.TestFooCUDA), test_nn.TestNN */
			t->form = IMPACT_FORM_CLASS;
			t->cls = name;
			t->cls_n = name_n;
			return true;
		}
		if (!test_name(name, name_n) || !class_name(cls, cls_n))
			return false;
		t->form = IMPACT_FORM_CLASS_METHOD;
		t->cls = cls;
		t->cls_n = cls_n;
		t->name = name;
		t->name_n = name_n;
		return true;
	}
	if (n > 5 && prefix(s, n, "test_") && ident(s, n)) {
		t->form = IMPACT_FORM_BARE;
		t->name = s;
		t->name_n = n;
		return true;
	}
	if (test_class(s, n)) {
		t->form = IMPACT_FORM_CLASS;
		t->cls = s;
		t->cls_n = n;
		return true;
	}
	return false;
}

static void trim(const char **s, size_t *n)
{
	while (*n && strchr(".:/", (*s)[0]))
		(*s)++, (*n)--;
	while (*n && strchr(".:/-", (*s)[*n - 1]))
		(*n)--;
}

/* -k EXPR: one identifier, scoped by the test file just before it (`test/x.py -k name`). */
static size_t k_token(struct impact_message_token *out, size_t n_out, const char *s, size_t n,
		      bool after_file)
{
	struct impact_message_token t = { .form = IMPACT_FORM_K, .s = s, .n = n };
	t.name = s;
	t.name_n = n;
	if (after_file) { /* the file token becomes the scope */
		n_out--;
		t.path = out[n_out].path;
		t.path_n = out[n_out].path_n;
	}
	out[n_out++] = t;
	return n_out;
}

size_t selector_impact_message_tokens(struct impact_message_token *out, size_t max, const char *msg,
				      size_t len)
{
	size_t n_out = 0, i = 0;
	bool k_next = false, after_file = false; /* the word before was "-k"; a test file */
	if (!msg || !out)
		return 0;
	if (len > IMPACT_MESSAGE_BYTES_MAX)
		len = IMPACT_MESSAGE_BYTES_MAX;
	while (i < len && n_out < max) {
		while (i < len && !word_char(msg[i]))
			i++;
		size_t b = i;
		while (i < len && word_char(msg[i]))
			i++;
		const char *s = msg + b;
		size_t n = i - b;
		if (n == 0 || n > IMPACT_MESSAGE_TOKEN_MAX) {
			k_next = after_file = false;
			continue;
		}
		trim(&s, &n);
		bool was_k = k_next, was_file = after_file;
		k_next = after_file = false;
		if (n == 2 && memcmp(s, "-k", 2) == 0) {
			k_next = true;
			after_file = was_file;
			continue;
		}
		if (was_k && ident(s, n)) {
			n_out = k_token(out, n_out, s, n, was_file);
			continue;
		}
		if (n > 2 && prefix(s, n, "-k") &&
		    (test_name(s + 2, n - 2) || class_name(s + 2, n - 2))) { /* -ktest_x */
			n_out = k_token(out, n_out, s + 2, n - 2, was_file);
			continue;
		}
		while (n && s[0] == '-')
			s++, n--;
		if (n && classify(&out[n_out], s, n))
			after_file = out[n_out++].form == IMPACT_FORM_FILE;
	}
	return n_out;
}
