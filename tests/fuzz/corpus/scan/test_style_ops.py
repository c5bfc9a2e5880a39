# Owner(s): ["module: tests"]
"""A test file in PyTorch's style, written for the scanner's golden checks."""
import unittest
from functools import partial

import torch
import torch.nn.functional as F
from torch.testing._internal.common_device_type import (
    dtypes,
    instantiate_device_type_tests,
    onlyCUDA,
    ops,
)
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import (
    TestCase,
    instantiate_parametrized_tests,
    parametrize,
    run_tests,
)


class TestUnaryStyle(TestCase):
    exact_dtype = True

    @ops(op_db)
    def test_reference(self, device, dtype, op):
        for sample in op.sample_inputs(device, dtype):
            out = op(sample.input, *sample.args)
            self.assertEqual(out, torch.mm(sample.input, sample.input))

    @ops([op for op in op_db if op.name in ("add", "sub")], dtypes=(torch.float32,))
    def test_subset(self, device, dtype, op):
        x = torch.ones(3, device=device)
        y = x.add(1)
        self.assertTrue(F.gelu(y).sum() > 0)

    @dtypes(torch.float16, torch.float32)
    def test_softmax(self, device, dtype):
        x = torch.randn(4, 4, device=device, dtype=dtype)
        torch.nn.functional.softmax(x, dim=-1)

    @onlyCUDA
    @dtypes(torch.bfloat16)
    async def test_async_cuda(self, device, dtype):
        await something()

    def helper(self):
        return partial(F.relu, inplace=False)


class TestParam(TestCase):
    @parametrize("x", [1, 2, 3])
    @parametrize("y", ["a", "b"])
    def test_pairs(self, x, y):
        self.assertIn(y, "ab")

    class Inner:
        def test_not_collected(self):
            pass


instantiate_device_type_tests(TestUnaryStyle, globals(), only_for=("cpu", "cuda"))
instantiate_parametrized_tests(TestParam)

if __name__ == "__main__":
    run_tests()
