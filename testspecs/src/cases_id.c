/* A kernel case's identity (cases_int.h): the hash its id and its seed come from. */
#include <string.h>

#include "cases_int.h"

uint64_t testspecs__fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

uint64_t testspecs__mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint64_t testspecs__case_hash(const char *test_id, const char *op, const struct shapes *s,
			      const char *dn)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	h = testspecs__fnv(h, test_id, strlen(test_id) + 1);
	h = testspecs__fnv(h, op, strlen(op) + 1);
	for (int i = 0; i < s->nin; i++) {
		h = testspecs__fnv(h, &s->ndims[i], sizeof(s->ndims[i]));
		h = testspecs__fnv(h, s->v[i], sizeof(int64_t) * (size_t)s->ndims[i]);
	}
	return testspecs__fnv(h, dn, strlen(dn) + 1);
}

static uint64_t tensor_hash(uint64_t h, const struct spec_tensor *t)
{
	if (t->stride.present)
		h = testspecs__fnv(h, t->stride.v, t->stride.n * sizeof(int64_t));
	if (t->has_storage_offset && t->storage_offset)
		h = testspecs__fnv(h, &t->storage_offset, sizeof(t->storage_offset));
	return h;
}

uint64_t testspecs__call_hash(uint64_t h, const struct spec_sample_inputs *si)
{
	for (size_t i = 0; i < si->n_args; i++) {
		const struct spec_arg *a = &si->args[i];
		if (a->kind == SPEC_ARG_TENSOR)
			h = tensor_hash(h, &a->tensor);
		for (size_t q = 0; a->kind == SPEC_ARG_TENSOR_LIST && q < a->n_list; q++)
			h = tensor_hash(h, &a->list[q]);
		if ((a->kind == SPEC_ARG_VALUE || a->kind == SPEC_ARG_PY) && a->text.s)
			h = testspecs__fnv(h, a->text.s, a->text.len + 1);
	}
	for (size_t i = 0; i < si->n_kwargs; i++) {
		const struct spec_kwarg *kw = &si->kwargs[i];
		if (kw->key.s)
			h = testspecs__fnv(h, kw->key.s, kw->key.len + 1);
		if (kw->arg.text.s)
			h = testspecs__fnv(h, kw->arg.text.s, kw->arg.text.len + 1);
	}
	return h;
}
