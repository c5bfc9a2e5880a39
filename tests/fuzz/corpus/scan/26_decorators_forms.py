import unittest
@unittest.skipIf(True, "reason")
@dtypes(*floating_types())
@onlyCPU
@parametrize("shape", [(1, 2), (3,)], name_fn=lambda s: str(s))
@toleranceOverride({torch.float16: tol(atol=1e-3, rtol=0)})
@deco[0]
def test_many(self):
    pass
@dataclass
class D:
    x: int = 0
