# Written for spyre-ci's scanner tests: the shapes of test methods a file adds at import time.
import torch
from torch.testing._internal.common_utils import TestCase, run_tests
from torch.testing._internal.common_device_type import dtypes, instantiate_device_type_tests


class TestGen(TestCase):
    def test_plain(self, device):
        pass


def add_format_tests(cls):
    class Unknown:
        pass

    def make(op):
        @dtypes(torch.float16)
        def test(self, device, dtype):
            t = torch.empty((), device=device, dtype=dtype)
            self.assertEqual(getattr(t, op)(Unknown()), NotImplemented)

        return test

    for op in magic_ops:
        test_name = "test_{}_not_supported".format(op)
        assert not hasattr(cls, test_name)
        setattr(cls, test_name, make(op))


def add_fstring_tests(cls):
    for kind in ["dense", 'sparse']:
        setattr(cls, f"test_layout_{kind}", lambda self, device: None)


def add_concat_tests(cls):
    for n in ("one", "two", "three"):
        name = "test_count_" + n
        setattr(cls, name, lambda self: None)


def add_dynamic_tests(cls):
    for op in torch.testing._internal.common_methods_invocations.op_db:
        setattr(cls, "test_dyn_" + op.name, lambda self: None)


magic_ops = [
    "__add__",
    "__radd__",  # reflected
    '__iadd__',
]

add_format_tests(TestGen)
add_fstring_tests(TestGen)
add_concat_tests(TestGen)
add_dynamic_tests(TestGen)
instantiate_device_type_tests(TestGen, globals())

if __name__ == "__main__":
    run_tests()
