# An op database in PyTorch's style, written for the scanner's golden checks.
from functools import partial

import torch
from torch.testing._internal.opinfo.core import (
    BinaryUfuncInfo,
    DecorateInfo,
    OpInfo,
    ReductionOpInfo,
    UnaryUfuncInfo,
)


def sample_inputs_add(op_info, device, dtype, requires_grad, **kwargs):
    yield torch.ones(2, device=device, dtype=dtype)


op_db: list[OpInfo] = [
    UnaryUfuncInfo('abs',
                   aliases=('absolute',),
                   ref=abs,
                   dtypes=all_types(),
                   decorators=(DecorateInfo(unittest.skip("no"), 'TestX', 'test_y'),)),
    BinaryUfuncInfo(
        "add",
        sample_inputs_func=sample_inputs_add,
        supports_fwgrad_bwgrad=True,
    ),
    OpInfo(
        name="mm",
        aten_name="mm",
        op=torch.mm,
    ),
    ReductionOpInfo('sum', variant_test_name='dim', identity=0),
    OpInfo('nn.functional.gelu', aten_name='gelu',
           sample_inputs_func=lambda *a, **k: iter([])),
    PythonRefInfo("_refs.add", torch_opinfo_name="add"),
]

# not an entry: a class and a call without a literal name
class SpecialInfo(OpInfo):
    pass

extra = OpInfo(make_name())
