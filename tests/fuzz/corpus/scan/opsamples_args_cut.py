S = 5
def sample_inputs_cut(op_info, device, dtype, requires_grad, **kwargs):
    yield SampleInput(make_arg(2 * (S,)), args=((1, 2),), kwargs={'dim': (0,)}))))]]}}
    yield SampleInput(make_arg((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((S, S)))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))), args=[(3, 3)
    t = (S, 1) * 9 * (S,
    u = * (S, M)
    v = 0 * (S,) ; w = (S,) * 3
    f(x=(1, 2), shape=(4, 4), y ==(5, 5), **(6, 6))
op_db = [OpInfo('x', dtypes=all_types_and(torch.half), sample_inputs_func=sample_inputs_cut)
