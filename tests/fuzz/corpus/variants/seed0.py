op_db = [
    BinaryUfuncInfo("add", variant_test_name="alpha"),
    ReductionOpInfo("sum"),
    UnaryUfuncInfo("exp"),
]


class T(TestCase):
    L = list(filter(lambda op: (op.name in ("a", "b",) and not (op.x or op.name != "sum")), op_db))

    @ops(((([o for o in [p for p in op_db if p.name == "add"] if isinstance(o, (A, B.BinaryUfuncInfo))]))))
    @parametrize("a,b", [(1, 'x'), subtest((2, 'y'), name='z'), (None, torch.float16)], name_fn=lambda a, b: f"{a}{{b}}")
    @dtypes(*x, torch.float16)
    def test_a(self, device, dtype, op, a, b):
        pass

    @ops(filter(lambda op, : op.name, ,))
    @ops(unary_ufuncs + + reduction_ops + tuple(op for op in))
    @parametrize("n", [subtest(name="q"), 1e3, "a\\"b", lambda x: x])
    def test_b(self):
        pass

    @parametrize("", [1, 2])
    def test_no_names(self, x):
        pass
