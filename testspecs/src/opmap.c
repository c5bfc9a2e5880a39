/* The one table between upstream PyTorch's op names and the emulator's ops. Spec authors write
 * OpInfo names (global.supported_ops, edits.ops.*: "nn.functional.gelu", "amax",
 * "div.no_rounding_mode"); the scanner reports calls ("torch.add", "F.softmax"); the emulator
 * knows "gelu", "max", "div". A name missing here is not guessed at run time: its cases are
 * unsupported, and docs/specs.md lists the table. The family says which @ops list of upstream's
 * op database the OpInfo belongs to, so that test_binary_ufuncs.py's tests do not expand to
 * softmax. pow is a binary ufunc upstream; the emulator raises to a scalar exponent, which is
 * what its default samples exercise. */
#include <stdio.h>
#include <string.h>

#include "testspecs/cases.h"

#define U SPEC_FAMILY_UNARY_UFUNC
#define B SPEC_FAMILY_BINARY_UFUNC
#define R SPEC_FAMILY_REDUCTION
#define O SPEC_FAMILY_OTHER

const struct spec_op_map testspecs_opmap[] = {
	/* binary ufuncs */
	{ "add", "add", B },
	{ "sub", "sub", B },
	{ "mul", "mul", B },
	{ "div", "div", B },
	{ "div.no_rounding_mode", "div", B },
	{ "true_divide", "div", B },
	{ "pow", "pow", B },
	{ "eq", "eq", B },
	{ "ne", "ne", B },
	{ "lt", "lt", B },
	{ "le", "le", B },
	{ "gt", "gt", B },
	{ "ge", "ge", B },
	/* unary ufuncs */
	{ "neg", "neg", U },
	{ "abs", "abs", U },
	{ "exp", "exp", U },
	{ "log", "log", U },
	{ "sqrt", "sqrt", U },
	{ "rsqrt", "rsqrt", U },
	{ "reciprocal", "reciprocal", U },
	{ "sigmoid", "sigmoid", U },
	{ "tanh", "tanh", U },
	{ "nn.functional.relu", "relu", O },
	{ "relu", "relu", O },
	{ "nn.functional.silu", "silu", O },
	{ "nn.functional.gelu", "gelu", O },
	{ "nn.functional.softplus", "softplus", O },
	{ "clamp", "clamp", O },
	{ "where", "where", O },
	/* reductions */
	{ "sum", "sum", R },
	{ "mean", "mean", R },
	{ "amax", "max", R },
	{ "amin", "min", R },
	{ "max.reduction_with_dim", "max", R },
	{ "min.reduction_with_dim", "min", R },
	/* row-wise */
	{ "softmax", "softmax", O },
	{ "nn.functional.softmax", "softmax", O },
	{ "log_softmax", "log_softmax", O },
	{ "nn.functional.log_softmax", "log_softmax", O },
	{ "nn.functional.layer_norm", "layer_norm", O },
	{ "nn.functional.rms_norm", "rms_norm", O },
	/* matmul family */
	{ "mm", "mm", O },
	{ "bmm", "bmm", O },
	{ "matmul", "matmul", O },
	{ "addmm", "addmm", O },
	{ "nn.functional.linear", "linear", O },
	/* layout, gather, fused */
	{ "transpose", "transpose", O },
	{ "permute", "permute", O },
	{ "contiguous", "contiguous", O },
	{ "nn.functional.embedding", "embedding", O },
	{ "nn.functional.scaled_dot_product_attention", "scaled_dot_product_attention", O },
	/* what real models call (torch-spyre's model-op configs name them torch.X and
	 * torch.Tensor.X: both normalise to X) */
	{ "cos", "cos", U },
	{ "sin", "sin", U },
	{ "truediv", "div", B },
	{ "to", "to", O },
	{ "float", "to", O }, /* Tensor.float(): to float32 */
	{ "view", "view", O },
	{ "reshape", "reshape", O },
	{ "unsqueeze", "unsqueeze", O },
	{ "expand", "expand", O },
	{ "getitem", "getitem", O }, /* x[index]: operator.getitem */
	{ "cat", "cat", O },
	{ "index_copy_", "index_copy_", O },
	{ "index_copy", "index_copy_", O },
	{ "zeros", "zeros", O },
	{ "arange", "arange", O },
	/* the emulator's own names that no OpInfo spells the same way (`kernels:` uses these) */
	{ "gelu", "gelu", O },
	{ "silu", "silu", O },
	{ "softplus", "softplus", O },
	{ "max", "max", R },
	{ "min", "min", R },
	{ "layer_norm", "layer_norm", O },
	{ "rms_norm", "rms_norm", O },
	{ "linear", "linear", O },
	{ "embedding", "embedding", O },
	{ "swiglu_mlp", "swiglu_mlp", O },
	{ "scaled_dot_product_attention", "scaled_dot_product_attention", O },
	{ "mul_scalar", "mul_scalar", O },
	{ "add_scalar", "add_scalar", O },
	{ "div_scalar", "div_scalar", O },
	{ "linear_nobias", "linear_nobias", O },
};
const size_t testspecs_opmap_count = sizeof(testspecs_opmap) / sizeof(testspecs_opmap[0]);

static const struct spec_op_map *find_exact(const char *name)
{
	for (size_t i = 0; i < testspecs_opmap_count; i++)
		if (strcmp(testspecs_opmap[i].upstream, name) == 0)
			return &testspecs_opmap[i];
	return NULL;
}

static const char *strip(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(name, prefix, n) == 0 ? name + n : NULL;
}

const struct spec_op_map *testspecs_opmap_find(const char *name)
{
	if (!name || !*name)
		return NULL;
	const struct spec_op_map *m = find_exact(name);
	if (m)
		return m;
	const char *rest = strip(name, "torch.nn.functional.");
	if (!rest)
		rest = strip(name, "F.");
	if (rest) {
		char buf[SPEC_CASE_OP_MAX + 16];
		if (snprintf(buf, sizeof(buf), "nn.functional.%s", rest) < (int)sizeof(buf) &&
		    (m = find_exact(buf)))
			return m;
	}
	rest = strip(name, "torch.");
	if (rest && strip(rest, "Tensor."))
		rest = strip(rest, "Tensor."); /* torch.Tensor.view */
	if (!rest)
		rest = strip(name, "Tensor.");
	if (rest && (m = find_exact(rest)))
		return m;
	return NULL;
}

const char *testspecs_opmap_form(const char *emu, int nin)
{
	static const struct {
		const char *emu;
		int nin;
		const char *form;
	} forms[] = {
		{ "mul", 1, "mul_scalar" },
		{ "add", 1, "add_scalar" },
		{ "div", 1, "div_scalar" },
		{ "linear", 2, "linear_nobias" },
	};
	for (size_t i = 0; emu && i < sizeof(forms) / sizeof(forms[0]); i++)
		if (strcmp(forms[i].emu, emu) == 0 && forms[i].nin == nin)
			return forms[i].form;
	return emu;
}

enum spec_op_family testspecs_family_for_path(const char *path)
{
	if (!path)
		return SPEC_FAMILY_ANY;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strcmp(base, "test_binary_ufuncs.py") == 0)
		return SPEC_FAMILY_BINARY_UFUNC;
	if (strcmp(base, "test_unary_ufuncs.py") == 0)
		return SPEC_FAMILY_UNARY_UFUNC;
	if (strcmp(base, "test_reductions.py") == 0)
		return SPEC_FAMILY_REDUCTION;
	return SPEC_FAMILY_ANY;
}
