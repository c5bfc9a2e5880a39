/* Fuzz target: the commit message tokenizer of stage 2's message signal. Invariants: it never
 * reads past the bytes it is given nor past IMPACT_MESSAGE_BYTES_MAX, keeps at most `max`
 * tokens, every token and every part of it (path, class, name) lies within the input, holds only
 * word bytes ([A-Za-z0-9_./:-]) and is no longer than IMPACT_MESSAGE_TOKEN_MAX, each form has
 * the parts it promises, and the same bytes give the same tokens (with a smaller `max`, a
 * prefix of them). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/limits.h"
#include "fuzz.h"
#include "selector/impact.h"

static bool word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '/' || c == ':' || c == '-';
}

static void within(const char *p, size_t n, const char *lo, const char *hi)
{
	if (n && (p < lo || p + n > hi))
		abort();
}

static void check(const struct impact_message_token *t, const char *data, size_t size)
{
	const char *end =
	    data + (size < IMPACT_MESSAGE_BYTES_MAX ? size : IMPACT_MESSAGE_BYTES_MAX);
	if (t->n == 0 || t->n > IMPACT_MESSAGE_TOKEN_MAX || (unsigned)t->form > IMPACT_FORM_CLASS)
		abort();
	within(t->s, t->n, data, end);
	for (size_t i = 0; i < t->n; i++)
		if (!word(t->s[i]))
			abort();
	/* -k's scope is the file token before it: within the input, not within the -k token */
	within(t->path, t->path_n, t->form == IMPACT_FORM_K ? data : t->s,
	       t->form == IMPACT_FORM_K ? end : t->s + t->n);
	within(t->cls, t->cls_n, t->s, t->s + t->n);
	within(t->name, t->name_n, t->s, t->s + t->n);
	bool p = t->path_n, c = t->cls_n, m = t->name_n;
	switch (t->form) {
	case IMPACT_FORM_FULL_ID:
		if (!p || !c || !m)
			abort();
		break;
	case IMPACT_FORM_PATH_CLASS:
		if (!p || !c || m)
			abort();
		break;
	case IMPACT_FORM_CLASS_METHOD:
		if (p || !c || !m)
			abort();
		break;
	case IMPACT_FORM_FILE:
		if (!p || c || m)
			abort();
		break;
	case IMPACT_FORM_K:
	case IMPACT_FORM_BARE:
		if (c || !m)
			abort();
		break;
	case IMPACT_FORM_CLASS:
		if (p || !c || m)
			abort();
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct impact_message_token a[IMPACT_MESSAGE_TOKENS_MAX],
	    b[IMPACT_MESSAGE_TOKENS_MAX];
	const char *s = (const char *)data;
	size_t n = selector_impact_message_tokens(a, IMPACT_MESSAGE_TOKENS_MAX, s, size);
	if (n > IMPACT_MESSAGE_TOKENS_MAX)
		abort();
	for (size_t i = 0; i < n; i++)
		check(&a[i], s, size);
	size_t k = selector_impact_message_tokens(b, 3, s, size);
	if (k > 3 || k > n || (n >= 3 && k != 3))
		abort();
	/* the last may differ: a "-k" after it would have made a file token its scope */
	if (k > 1 && memcmp(a, b, (k - 1) * sizeof(*a)) != 0)
		abort();
	return 0;
}
