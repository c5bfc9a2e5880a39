/* What an op database entry says about the cases its op runs: its dtypes= evaluated statically
 * (a tuple of torch dtypes or PyTorch's common_dtype helpers, floating_types(),
 * all_types_and(torch.half, ...)) and the literal shapes its sample_inputs_func builds when the
 * function is defined in the same file: every parenthesized tuple of integer literals and size
 * constants (S, M, L, XS: the file's module-level `S = 5`, else PyTorch's values) in the
 * function's body, as in `make_arg((S, M))` or `for shape in ((S,), (S, M)):`, and the leading
 * arguments of a call of a `make...` factory when they are such elements (`make_arg(S, S, S)`,
 * `make_tensor(3, device=device)`). Works on the raw
 * text and the scanner's function ranges; tests/tools/scan_ref.py computes the same with ast. */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "scan_internal.h"

#define SHAPES_MAX    16 /* distinct shapes kept per sample function */
#define SHAPE_DIMS    8  /* a longer tuple is no shape */
#define DIM_MAX       (1 << 20)
#define SAMPLES_CHARS (SHAPES_MAX * (SHAPE_DIMS * 9 + 4) + 1)

/* ---- dtypes ---- */

enum { F16, BF16, F32, F64, C32, C64, C128, U8, I8, I16, I32, I64, BOOL, U16, U32, U64, NDT };

static const char *const dt_names[NDT] = { "float16",   "bfloat16",  "float32",    "float64",
					   "complex32", "complex64", "complex128", "uint8",
					   "int8",      "int16",     "int32",      "int64",
					   "bool",      "uint16",    "uint32",     "uint64" };

static const struct {
	const char *name;
	int dt;
} dt_alias[] = { { "half", F16 },  { "float", F32 },  { "double", F64 },
		 { "chalf", C32 }, { "cfloat", C64 }, { "cdouble", C128 },
		 { "short", I16 }, { "int", I32 },    { "long", I64 } };

#define FLOATING ((1u << F32) | (1u << F64))
#define COMPLEX  ((1u << C64) | (1u << C128))
#define INTEGRAL ((1u << U8) | (1u << I8) | (1u << I16) | (1u << I32) | (1u << I64))

/* PyTorch's helpers (torch/testing/_internal/common_dtype.py) and what they hold before _and's
 * arguments. */
static const struct {
	const char *name;
	unsigned base;
} helpers[] = {
	{ "empty_types", 0 },
	{ "custom_types", 0 },
	{ "floating_types", FLOATING },
	{ "floating_types_and", FLOATING },
	{ "floating_and_complex_types", FLOATING | COMPLEX },
	{ "floating_and_complex_types_and", FLOATING | COMPLEX },
	{ "integral_types", INTEGRAL },
	{ "integral_types_and", INTEGRAL },
	{ "all_types", FLOATING | INTEGRAL },
	{ "all_types_and", FLOATING | INTEGRAL },
	{ "all_types_and_complex", FLOATING | INTEGRAL | COMPLEX },
	{ "all_types_and_complex_and", FLOATING | INTEGRAL | COMPLEX },
	{ "complex_types", COMPLEX },
	{ "complex_types_and", COMPLEX },
};

static bool word_is(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* "torch.half" -> F16; -1 when not a torch dtype. */
static int dtype_of(const char *s, size_t n)
{
	if (n <= 6 || memcmp(s, "torch.", 6) != 0)
		return -1;
	s += 6;
	n -= 6;
	for (int i = 0; i < NDT; i++)
		if (word_is(s, n, dt_names[i]))
			return i;
	for (size_t i = 0; i < sizeof dt_alias / sizeof *dt_alias; i++)
		if (word_is(s, n, dt_alias[i].name))
			return dt_alias[i].dt;
	return -1;
}

static void skip_ws(const char *s, size_t n, size_t *i)
{
	while (*i < n && isspace((unsigned char)s[*i]))
		(*i)++;
}

static size_t dotted(const char *s, size_t n, size_t i)
{
	while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.'))
		i++;
	return i;
}

/* A comma-separated list of torch dtypes up to `close`; false when anything else is in it. */
static bool dtype_items(const char *s, size_t n, size_t *i, char close, unsigned *mask)
{
	for (;;) {
		skip_ws(s, n, i);
		if (*i < n && s[*i] == close) {
			(*i)++;
			return true;
		}
		size_t e = dotted(s, n, *i);
		int d = dtype_of(s + *i, e - *i);
		if (d < 0)
			return false;
		*mask |= 1u << d;
		*i = e;
		skip_ws(s, n, i);
		if (*i < n && s[*i] == ',')
			(*i)++;
		else if (!(*i < n && s[*i] == close))
			return false;
	}
}

static bool eval_mask(const char *s, size_t n, unsigned *mask)
{
	size_t i = 0;
	skip_ws(s, n, &i);
	static const char wrap[] = "_dispatch_dtypes"; /* _dispatch_dtypes((torch.int64,)) */
	size_t w = sizeof wrap - 1, end = n;
	while (end > i && isspace((unsigned char)s[end - 1]))
		end--;
	if (end - i > w && memcmp(s + i, wrap, w) == 0 && s[end - 1] == ')') {
		size_t k = i + w;
		skip_ws(s, n, &k);
		if (k < end && s[k] == '(')
			return eval_mask(s + k + 1, end - 1 - (k + 1), mask);
	}
	if (i < n && (s[i] == '(' || s[i] == '[')) {
		i++;
		if (!dtype_items(s, n, &i, s[i - 1] == '(' ? ')' : ']', mask))
			return false;
	} else {
		size_t e = dotted(s, n, i);
		int d = dtype_of(s + i, e - i);
		if (d >= 0) {
			*mask |= 1u << d;
			i = e;
		} else {
			size_t h = 0;
			while (h < sizeof helpers / sizeof *helpers &&
			       !word_is(s + i, e - i, helpers[h].name))
				h++;
			if (h == sizeof helpers / sizeof *helpers)
				return false;
			*mask |= helpers[h].base;
			i = e;
			skip_ws(s, n, &i);
			if (i >= n || s[i] != '(')
				return false;
			i++;
			if (!dtype_items(s, n, &i, ')', mask))
				return false;
		}
	}
	skip_ws(s, n, &i);
	return i == n;
}

int scan__dtypes_eval(struct arena *a, const char *s, size_t n, const char **out)
{
	*out = NULL;
	unsigned mask = 0;
	if (!eval_mask(s, n, &mask))
		return 0;
	char buf[160];
	size_t k = 0;
	buf[0] = '\0';
	for (int d = 0; d < NDT; d++)
		if (mask & (1u << d))
			k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", k ? "," : "",
					      dt_names[d]);
	*out = scan__strndup(a, buf, k);
	return *out ? 0 : ERR_NOMEM;
}

/* ---- shapes ---- */

struct consts {
	long s, m, l, xs; /* PyTorch's opinfo/core.py values unless the file binds its own */
};

/* The value of a size constant or an integer literal; -1 when neither. */
static long element(const struct consts *c, const char *s, size_t n)
{
	if (n && isdigit((unsigned char)s[0])) {
		long v = 0;
		for (size_t i = 0; i < n; i++) {
			if (!isdigit((unsigned char)s[i]) || v > DIM_MAX)
				return -1;
			v = v * 10 + (s[i] - '0');
		}
		return v > DIM_MAX ? -1 : v;
	}
	return word_is(s, n, "S")    ? c->s
	       : word_is(s, n, "M")  ? c->m
	       : word_is(s, n, "L")  ? c->l
	       : word_is(s, n, "XS") ? c->xs
				     : -1;
}

/* Whether d[i..] is `name =` (a keyword argument; not `==`). */
static bool keyword_arg(const char *d, size_t len, size_t i)
{
	if (i >= len || !(isalpha((unsigned char)d[i]) || d[i] == '_'))
		return false;
	while (i < len && (isalnum((unsigned char)d[i]) || d[i] == '_'))
		i++;
	skip_ws(d, len, &i);
	return i + 1 < len && d[i] == '=' && d[i + 1] != '=';
}

/* The elements of a tuple opening at d[i] == '(', or of a call's arguments when `call`
 * (`make_arg(S, M, device=device)`: integers and size constants up to ')' or the first keyword
 * argument, at least one): its text "(5, 10)" in `out`, or false when not a shape. */
static bool shape_at(const struct consts *c, const char *d, size_t len, size_t i, bool call,
		     char *out, size_t cap)
{
	size_t k = (size_t)snprintf(out, cap, "(");
	int nd = 0;
	bool comma = false;
	for (i++;;) {
		skip_ws(d, len, &i);
		if (i >= len)
			return false;
		if (d[i] == ')' || (call && nd && comma && keyword_arg(d, len, i)))
			break;
		size_t e = i;
		while (e < len && (isalnum((unsigned char)d[e]) || d[e] == '_'))
			e++;
		long v = element(c, d + i, e - i);
		if (v < 0 || nd == SHAPE_DIMS)
			return false;
		k += (size_t)snprintf(out + k, cap - k, "%s%ld", nd ? ", " : "", v);
		nd++;
		i = e;
		skip_ws(d, len, &i);
		comma = i < len && d[i] == ',';
		if (comma)
			i++;
		else if (!(i < len && d[i] == ')'))
			return false;
	}
	if (nd == 1 && !comma && !call)
		return false; /* (S) is a parenthesized expression */
	if (call && nd == 0)
		return false;
	snprintf(out + k, cap - k, nd == 1 ? ",)" : ")");
	return true;
}

/* Whether the word ending at d[p] (exclusive) starts with "make": make_arg, make_input,
 * make_tensor, make (the tensor factories of sample functions). */
static bool maker_before(const char *d, size_t from, size_t p)
{
	size_t b = p;
	while (b > from && (isalnum((unsigned char)d[b - 1]) || d[b - 1] == '_'))
		b--;
	return p - b >= 4 && memcmp(d + b, "make", 4) == 0;
}

/* Past a string literal opening at d[i] (a quote). */
static size_t skip_string(const char *d, size_t len, size_t i)
{
	char q = d[i];
	bool triple = i + 2 < len && d[i + 1] == q && d[i + 2] == q;
	for (i += triple ? 3 : 1; i < len; i++) {
		if (d[i] == '\\') {
			i++;
		} else if (d[i] == q) {
			if (!triple)
				return i + 1;
			if (i + 2 < len && d[i + 1] == q && d[i + 2] == q)
				return i + 3;
		} else if (d[i] == '\n' && !triple) {
			return i;
		}
	}
	return len;
}

/* Appends `shape` to the ';'-separated `list` unless there already. */
static void add_shape(char *list, size_t *k, size_t *n, const char *shape)
{
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ';');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l == strlen(shape) && memcmp(p, shape, l) == 0)
			return;
		p = e ? e + 1 : p + l;
	}
	if (*n == SHAPES_MAX || *k + strlen(shape) + 2 >= SAMPLES_CHARS)
		return;
	*k += (size_t)snprintf(list + *k, SAMPLES_CHARS - *k, "%s%s", *n ? ";" : "", shape);
	(*n)++;
}

/* Whether the word ending at d[p] (exclusive) is a keyword an expression may follow:
 * `return (S, M)`, `in ((S,), (M,))`. */
static bool keyword_before(const char *d, size_t from, size_t p)
{
	static const char *const kws[] = { "in",  "return", "yield", "and",   "or",
					   "not", "if",     "else",  "elif",  "while",
					   "is",  "assert", "await", "lambda" };
	size_t b = p;
	while (b > from && (isalnum((unsigned char)d[b - 1]) || d[b - 1] == '_'))
		b--;
	if (b > from && d[b - 1] == '.')
		return false;
	for (size_t i = 0; i < sizeof kws / sizeof *kws; i++)
		if (word_is(d + b, p - b, kws[i]))
			return true;
	return false;
}

/* The brackets open around a position of a sample function's body: each with whether it is a
 * keyword argument's value that holds no shape (`args=(1,)`, `dim=(0, 1)`: the sample's
 * arguments, not its tensors). Deeper nesting than NEST_MAX is followed but not flagged. */
#define NEST_MAX 64
struct nest {
	size_t depth;
	char open[NEST_MAX];
	bool arg[NEST_MAX];
};

/* The innermost open bracket, or '\0' at the top. */
static char nest_top(const struct nest *st, bool *arg)
{
	size_t t = st->depth < NEST_MAX ? st->depth : NEST_MAX;
	if (arg)
		*arg = st->depth && st->depth <= NEST_MAX && st->arg[t - 1];
	return st->depth && st->depth <= NEST_MAX ? st->open[t - 1] : '\0';
}

/* Whether the bracket at d[p] (p: after skipping blanks back from it) is a keyword argument's
 * value other than shape=/size= inside a call: `args=(`, `dim=(` but not `x == (`. */
static bool keyword_value(const struct nest *st, const char *d, size_t from, size_t p)
{
	if (nest_top(st, NULL) != '(' || p <= from || d[p - 1] != '=')
		return false;
	size_t q = p - 1;
	while (q > from && (d[q - 1] == ' ' || d[q - 1] == '\t'))
		q--;
	size_t b = q;
	while (b > from && (isalnum((unsigned char)d[b - 1]) || d[b - 1] == '_'))
		b--;
	if (b == q)
		return false; /* `==`, `<=`, `:=`, ... */
	return !word_is(d + b, q - b, "shape") && !word_is(d + b, q - b, "size");
}

/* The factor of `N * (...)` or `(...) * N` around a tuple from d[i] to d[end] (its ')'), p the
 * first non-blank before it: 1 when there is none, N when an integer or size constant, -1 when
 * the tuple is multiplied by anything else. `*(S, M)` (unpacking) is no product. */
static long product_factor(const struct consts *c, const char *d, size_t from, size_t to, size_t p,
			   size_t end)
{
	size_t a = end + 1;
	while (a < to && (d[a] == ' ' || d[a] == '\t'))
		a++;
	if (a < to && d[a] == '*' && !(a + 1 < to && d[a + 1] == '*')) {
		a++;
		while (a < to && (d[a] == ' ' || d[a] == '\t'))
			a++;
		size_t e = a;
		while (e < to && (isalnum((unsigned char)d[e]) || d[e] == '_'))
			e++;
		return element(c, d + a, e - a);
	}
	if (p <= from || d[p - 1] != '*')
		return 1;
	size_t q = p - 1;
	while (q > from && (d[q - 1] == ' ' || d[q - 1] == '\t'))
		q--;
	if (q == from || strchr("*(,[{=:", d[q - 1]))
		return 1; /* unpacking, not a product */
	size_t b = q;
	while (b > from && (isalnum((unsigned char)d[b - 1]) || d[b - 1] == '_'))
		b--;
	return element(c, d + b, q - b);
}

/* "(5,)" repeated `times` times ("(5, 5)"); false when the result is no shape. */
static bool repeat_shape(char *shape, size_t cap, long times)
{
	if (times == 1)
		return true;
	if (times < 1 || times > SHAPE_DIMS)
		return false;
	char one[SHAPE_DIMS * 9 + 4];
	size_t n = strlen(shape);
	if (n < 3 || n >= sizeof one)
		return false;
	memcpy(one, shape + 1, n - 2); /* the elements, with a trailing ',' for one */
	one[n - 2] = '\0';
	size_t l = strlen(one);
	if (l && one[l - 1] == ',')
		one[--l] = '\0';
	int nd = 1;
	for (const char *q = one; *q; q++)
		nd += *q == ',';
	if (nd * times > SHAPE_DIMS)
		return false;
	size_t k = (size_t)snprintf(shape, cap, "(");
	for (long t = 0; t < times; t++)
		k += (size_t)snprintf(shape + k, cap - k, "%s%s", t ? ", " : "", one);
	snprintf(shape + k, cap - k, ")");
	return true;
}

/* Whether the tuple opening at d[i] (p: the first non-blank before it) holds a sample's
 * arguments rather than a tensor's shape: a keyword argument's value (`args=(1,)`), an element
 * of one (`args=((1, 2),)`), or a dict's value (`{'dim': (0,)}`). */
static bool argument_tuple(const struct nest *st, const char *d, size_t from, size_t p)
{
	bool in_arg;
	char top = nest_top(st, &in_arg);
	return in_arg || keyword_value(st, d, from, p) ||
	       (top == '{' && p > from && d[p - 1] == ':');
}

static void nest_push(struct nest *st, char open, bool arg)
{
	if (st->depth < NEST_MAX) {
		st->open[st->depth] = open;
		st->arg[st->depth] = arg;
	}
	st->depth++;
}

static void body_shapes(const struct consts *c, const char *d, size_t from, size_t to, char *list)
{
	size_t k = 0, n = 0;
	struct nest st = { 0 };
	list[0] = '\0';
	for (size_t i = from; i < to; i++) {
		char ch = d[i];
		if (ch == '#') {
			while (i < to && d[i] != '\n')
				i++;
		} else if (ch == '"' || ch == '\'') {
			i = skip_string(d, to, i) - 1;
		} else if (ch == ')' || ch == ']' || ch == '}') {
			st.depth -= st.depth > 0;
		} else if (ch == '[' || ch == '{') {
			size_t p = i;
			while (p > from && (d[p - 1] == ' ' || d[p - 1] == '\t'))
				p--;
			nest_push(&st, ch, ch == '[' && keyword_value(&st, d, from, p));
		} else if (ch == '(') {
			size_t p = i;
			while (p > from && (d[p - 1] == ' ' || d[p - 1] == '\t'))
				p--;
			char prev = p > from ? d[p - 1] : '\n';
			bool call = isalnum((unsigned char)prev) || prev == '_' || prev == ')' ||
				    prev == ']' || prev == '.' || prev == '"' || prev == '\'';
			if (call && isalpha((unsigned char)prev) && keyword_before(d, from, p))
				call = false;
			bool maker = call && maker_before(d, from, p);
			bool arg = !call && keyword_value(&st, d, from, p);
			char shape[SHAPE_DIMS * 9 + 4];
			if (maker) {
				if (shape_at(c, d, to, i, true, shape, sizeof shape))
					add_shape(list, &k, &n, shape);
			} else if (!call && !argument_tuple(&st, d, from, p) &&
				   shape_at(c, d, to, i, false, shape, sizeof shape)) {
				size_t end = i;
				while (end < to && d[end] != ')')
					end++;
				long times = product_factor(c, d, from, to, p, end);
				if (repeat_shape(shape, sizeof shape, times))
					add_shape(list, &k, &n, shape);
			}
			nest_push(&st, '(', arg);
		}
	}
}

/* Byte offset where 1-based `line` starts; len when past the end. */
static size_t line_start(const char *d, size_t len, uint32_t line)
{
	size_t i = 0;
	for (uint32_t l = 1; l < line && i < len; i++)
		if (d[i] == '\n')
			l++;
	return i;
}

/* Module-level `S = 5` (at column 0) overrides PyTorch's value. */
static void read_consts(struct consts *c, const char *d, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t e = i;
		while (e < len && (isalnum((unsigned char)d[e]) || d[e] == '_'))
			e++;
		long *slot = word_is(d + i, e - i, "S")    ? &c->s
			     : word_is(d + i, e - i, "M")  ? &c->m
			     : word_is(d + i, e - i, "L")  ? &c->l
			     : word_is(d + i, e - i, "XS") ? &c->xs
							   : NULL;
		size_t j = e;
		while (j < len && d[j] == ' ')
			j++;
		if (slot && j < len && d[j] == '=' && j + 1 < len && d[j + 1] != '=') {
			j++;
			while (j < len && d[j] == ' ')
				j++;
			size_t v = j;
			while (v < len && isdigit((unsigned char)d[v]))
				v++;
			size_t t = v;
			while (t < len && (d[t] == ' ' || d[t] == '\r'))
				t++;
			long val = element(c, d + j, v - j);
			if (v > j && val >= 0 && (t == len || d[t] == '\n' || d[t] == '#'))
				*slot = val;
		}
		while (i < len && d[i] != '\n')
			i++;
		i++;
	}
}

/* A module-level def of the file, by name, with the shapes of its body once computed. */
struct mdef {
	const char *name;
	const struct scan_function *fn;
	const char *samples; /* NULL until computed, "" when it builds none */
};

static int mdef_cmp(const void *a, const void *b)
{
	return strcmp(((const struct mdef *)a)->name, ((const struct mdef *)b)->name);
}

/* The first module-level def named `name` (qsort is not stable: ties are broken by line). */
static struct mdef *module_def(struct mdef *v, size_t n, const char *name)
{
	struct mdef key = { name, NULL, NULL };
	struct mdef *m = bsearch(&key, v, n, sizeof *v, mdef_cmp);
	while (m && m > v && strcmp(m[-1].name, name) == 0)
		m--;
	return m;
}

static int mdef_order(const void *a, const void *b)
{
	const struct mdef *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c
		 : (x->fn->first_line > y->fn->first_line) -
		       (x->fn->first_line < y->fn->first_line);
}

/* Each function is read once however many entries name it, so the work stays linear in the
 * file (a file of many entries naming one long function is no quadratic case). */
static int shapes_of(struct mdef *m, struct arena *a, const struct consts *c, const char *d,
		     size_t len, char *list)
{
	if (m->samples)
		return 0;
	size_t from = line_start(d, len, m->fn->first_line);
	size_t to = line_start(d, len, m->fn->last_line + 1);
	body_shapes(c, d, from, to, list);
	m->samples = scan__strndup(a, list, strlen(list));
	return m->samples ? 0 : err_set(ERR_NOMEM, "scan: out of memory for sample shapes");
}

int scan__opsamples(struct scan_file *f, struct arena *a, const char *d, size_t len)
{
	bool any = false;
	for (size_t i = 0; i < f->n_opinfos && !any; i++)
		any = f->opinfos[i].sample_func != NULL;
	if (!any)
		return 0;
	struct consts c = { 5, 10, 20, 3 };
	read_consts(&c, d, len);
	size_t n = 0;
	for (size_t i = 0; i < f->n_functions; i++)
		n += f->functions[i].class_index < 0 && f->functions[i].parent_function < 0;
	struct mdef *v = scan__alloc(a, (n ? n : 1) * sizeof *v);
	if (!v)
		return err_set(ERR_NOMEM, "scan: out of memory for sample shapes");
	n = 0;
	for (size_t i = 0; i < f->n_functions; i++) {
		const struct scan_function *fn = &f->functions[i];
		if (fn->class_index < 0 && fn->parent_function < 0)
			v[n++] = (struct mdef){ fn->name, fn, NULL };
	}
	qsort(v, n, sizeof *v, mdef_order);
	char list[SAMPLES_CHARS];
	for (size_t i = 0; i < f->n_opinfos; i++) {
		struct scan_opinfo *o = &f->opinfos[i];
		struct mdef *m = o->sample_func ? module_def(v, n, o->sample_func) : NULL;
		if (!m)
			continue;
		if (shapes_of(m, a, &c, d, len, list))
			return ERR_NOMEM;
		o->samples = m->samples[0] ? m->samples : NULL;
	}
	return 0;
}
