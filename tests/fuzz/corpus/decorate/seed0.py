op_db = [
    OpInfo("a", skips=(
        # it's a comment with a quote, and (brackets
        DecorateInfo(unittest.skip("x, y"), cls_name="TestX", test_name=None, dtypes=[torch.half]),
        DecorateInfo(unittest.expectedFailure, 'TestX', 'test_y', active_if=True),
        DecorateInfo(toleranceOverride({torch.float16: tol(1e-2, 1e-1), torch.cfloat: tol(rtol=2, atol=3)}),),
        DecorateInfo(precisionOverride({torch.bfloat16: 'x'}), 'TestX'),
        DecorateInfo(),
        DecorateInfo(unittest.skip(, 'TestX', dtypes=(torch.float16,
    ), decorators=[precisionOverride({torch.float32: 1e-3, torch.float64: -1}), toleranceOverride({})]),
]


class TestX:
    @toleranceOverride({torch.float16: tol(atol=1e-2, rtol=1e-2)})
    @precisionOverride({torch.bfloat16: 1e999, torch.float16: 1e308 * 10})
    def test_y(self, device, dtype, op):
        op()
