/* Included once by reference.c: the float64 references of the fused ops (swiglu_mlp and
 * scaled_dot_product_attention), kept apart so that reference.c stays readable. */

/* (silu(x @ w1) * (x @ w3)) @ w2 over the rows of x. */
static int ref_swiglu_mlp(struct ref *r)
{
	uint64_t h = (uint64_t)r->in[1].shape[0], f = (uint64_t)r->in[1].shape[1],
		 o = (uint64_t)r->in[3].shape[1];
	uint64_t rows = h ? spyre_tensor_numel(&r->in[0]) / h : 0;
	double *g = malloc((f ? f : 1) * sizeof(double));
	if (!g)
		return err_set(ERR_NOMEM, "swiglu_mlp reference: %llu hidden values",
			       (unsigned long long)f);
	for (uint64_t i = 0; i < rows; i++) {
		const double *x = r->x[0] + i * h;
		for (uint64_t j = 0; j < f; j++) {
			double a = 0.0, b = 0.0;
			for (uint64_t q = 0; q < h; q++) {
				a += x[q] * r->x[1][q * f + j];
				b += x[q] * r->x[2][q * f + j];
			}
			g[j] = a * sigmoid(a) * b;
		}
		gemm(r->out + i * o, g, r->x[3], 1, f, o);
	}
	free(g);
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
			for (uint64_t d = 0; d < Dv; d++) {
				double acc = 0.0;
				for (uint64_t j = 0; j < S; j++)
					acc += s[j] * r->x[2][(b * S + j) * Dv + d];
				o[d] = acc / sum;
			}
		}
	free(s);
	return 0;
}
