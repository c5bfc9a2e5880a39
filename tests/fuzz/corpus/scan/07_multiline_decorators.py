import torch
from torch.testing._internal.common_device_type import dtypes, ops
class T:
    @dtypes(
        torch.float16,
        torch.float32,
    )
    @ops(
        [op for op in op_db
         if op.name == "add"],
    )
    def test_a(self, device, dtype, op):
        pass
