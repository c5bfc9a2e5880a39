S = 5
def sample_inputs_x(op_info, device, dtype, requires_grad, **kwargs):
    for shape in ((S,), (S, M), ((), (1,
        yield "(S, S)" # (S, S)
op_db = [OpInfo('x', dtypes=all_types_and(torch.half, sample_inputs_func=sample_inputs_x),
         UnaryUfuncInfo('y', dtypes=(torch.float16,, torch.float32), sample_inputs_func=sample_inputs_x)
