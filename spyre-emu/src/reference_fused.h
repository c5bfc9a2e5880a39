/* Included once by reference.c: the float64 references of the fused ops (swiglu_mlp and
 * scaled_dot_product_attention), kept apart so that reference.c stays readable. */

/* (silu(x @ w1) * (x @ w3)) @ w2 over the rows of x, in blocks of rows: each product one
 * dgemm (a loop over w1's columns strided through memory took most of an hour at Granite's
 * prefill size). */
#define SWIGLU_REF_ROWS 64

static int ref_swiglu_mlp(struct ref *r)
{
	uint64_t h = (uint64_t)r->in[1].shape[0], f = (uint64_t)r->in[1].shape[1],
		 o = (uint64_t)r->in[3].shape[1];
	uint64_t rows = h ? spyre_tensor_numel(&r->in[0]) / h : 0;
	uint64_t n = (f ? f : 1) * SWIGLU_REF_ROWS;
	double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
	if (!a || !b) {
		free(a);
		free(b);
		return err_set(ERR_NOMEM, "swiglu_mlp reference: %llu hidden values",
			       (unsigned long long)n);
	}
	for (uint64_t i = 0; i < rows; i += SWIGLU_REF_ROWS) {
		uint64_t m = rows - i < SWIGLU_REF_ROWS ? rows - i : SWIGLU_REF_ROWS;
		gemm(a, r->x[0] + i * h, r->x[1], m, h, f);
		gemm(b, r->x[0] + i * h, r->x[2], m, h, f);
		for (uint64_t j = 0; j < m * f; j++)
			a[j] = a[j] * sigmoid(a[j]) * b[j];
		gemm(r->out + i * o, a, r->x[3], m, f, o);
	}
	free(a);
	free(b);
	return 0;
}

/* softmax(q @ k^T * scale, masked above the diagonal when causal) @ v, per batch; scale is
 * 1/sqrt(D) unless params give one (Granite's attention_multiplier). */
static int ref_scaled_dot_product_attention(struct ref *r)
{
	const struct spyre_tensor *q = &r->in[0], *k = &r->in[1], *v = &r->in[2];
	int nd = q->ndim;
	uint64_t L = (uint64_t)q->shape[nd - 2], D = (uint64_t)q->shape[nd - 1];
	uint64_t S = (uint64_t)k->shape[nd - 2], Dv = (uint64_t)v->shape[nd - 1];
	uint64_t nb = prod(q->shape, 0, nd - 2);
	double scale = r->p->has_scale ? r->p->scale : D ? 1.0 / sqrt((double)D) : 1.0;
	double *s = malloc((S ? S : 1) * sizeof(double));
	if (!s)
		return err_set(ERR_NOMEM, "attention reference: %llu scores",
			       (unsigned long long)S);
	for (uint64_t b = 0; b < nb; b++)
		for (uint64_t i = 0; i < L; i++) {
			const double *qi = r->x[0] + (b * L + i) * D;
			double m = -INFINITY, sum = 0.0;
			for (uint64_t j = 0; j < S; j++) {
				const double *kj = r->x[1] + (b * S + j) * D;
				double dot = 0.0;
				for (uint64_t d = 0; d < D; d++)
					dot += qi[d] * kj[d];
				s[j] = r->p->causal && j > i ? -INFINITY : dot * scale;
				m = s[j] > m ? s[j] : m;
			}
			for (uint64_t j = 0; j < S; j++)
				sum += (s[j] = exp(s[j] - m));
			double *o = r->out + (b * L + i) * Dv;
			for (uint64_t d = 0; d < Dv; d++)
				o[d] = 0.0;
			for (uint64_t j = 0; j < S; j++) /* rows of v in order: no strided walk */
				for (uint64_t d = 0; d < Dv; d++)
					o[d] += s[j] * r->x[2][(b * S + j) * Dv + d];
			for (uint64_t d = 0; d < Dv; d++)
				o[d] /= sum;
		}
	free(s);
	return 0;
}
