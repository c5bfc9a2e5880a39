/* Included once by reference.c: the float64 references of the ops real models add (tensor-scalar
 * arithmetic, cos and sin, casts, linear without bias, and the MOVE ops, whose element map is
 * moves.c's). */

PW(cos, cos(x[0]))
PW(sin, sin(x[0]))
PW(mul_scalar, x[0] * p->scalar)
PW(add_scalar, x[0] + p->scalar)
PW(div_scalar, x[0] / p->scalar)
PW(to, x[0])

static int ref_linear_nobias(struct ref *r)
{
	const struct spyre_tensor *w = &r->in[1];
	uint64_t out = (uint64_t)w->shape[0], k = (uint64_t)w->shape[1];
	uint64_t rows = out ? r->n / out : 0;
	for (uint64_t i = 0; i < rows; i++)
		for (uint64_t o = 0; o < out; o++) {
			double s = 0.0;
			for (uint64_t q = 0; q < k; q++)
				s += r->x[0][i * k + q] * r->x[1][o * k + q];
			r->out[i * out + o] = s;
		}
	return 0;
}

/* Every output element is the input element the map names (0 where it names none). */
static int ref_moves(struct ref *r)
{
	int64_t shapes[SPYRE_OP_INPUTS_MAX][SPYRE_DIMS_MAX] = { { 0 } };
	int ndims[SPYRE_OP_INPUTS_MAX] = { 0 };
	int nin = r->op->nin;
	for (int t = 0; t < nin; t++) {
		memcpy(shapes[t], r->in[t].shape, sizeof(shapes[t]));
		ndims[t] = r->in[t].ndim;
	}
	int64_t *slots = NULL;
	int rc = 0;
	if (strcmp(r->op->name, "index_copy_") == 0) {
		int nd = r->in[0].ndim, d = r->p->dim < 0 ? r->p->dim + nd : r->p->dim;
		if (d < 0 || d >= nd)
			return err_set(ERR_INVAL, "index_copy_: dim %d out of range", r->p->dim);
		int64_t size = r->in[0].shape[d], n = r->in[1].shape[0];
		int64_t *ix = malloc((size_t)(n ? n : 1) * sizeof(*ix));
		slots = malloc((size_t)(size ? size : 1) * sizeof(*slots));
		if (!ix || !slots)
			rc = err_set(ERR_NOMEM, "index_copy_ reference: out of memory");
		for (int64_t j = 0; !rc && j < n; j++)
			ix[j] = (int64_t)r->x[1][j];
		if (!rc)
			rc = moves__slots(slots, size, ix, n);
		free(ix);
	}
	struct moves_map m;
	if (!rc)
		rc = moves__map_init(&m, r->op, (const int64_t(*)[SPYRE_DIMS_MAX])shapes, ndims,
				     nin, r->p, slots);
	for (uint64_t k = 0; !rc && k < r->n; k++) {
		uint64_t src;
		int t = moves__source(&m, k, &src);
		r->out[k] = t < 0 ? 0.0 : r->x[t][src];
	}
	free(slots);
	return rc;
}

#define MOVES_REF(name)                                                                            \
	static int ref_##name(struct ref *r)                                                       \
	{                                                                                          \
		return ref_moves(r);                                                               \
	}
MOVES_REF(view)
MOVES_REF(reshape)
MOVES_REF(unsqueeze)
MOVES_REF(expand)
MOVES_REF(getitem)
MOVES_REF(cat)
MOVES_REF(index_copy_)
MOVES_REF(zeros)

static int ref_arange(struct ref *r)
{
	for (uint64_t k = 0; k < r->n; k++)
		r->out[k] = r->p->scalar + (double)k * r->p->scalar2;
	return 0;
}
