import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.functional import gelu as my_gelu
aten = torch.ops.aten
def helper(): pass
def f(x):
    a = F.gelu(x)
    b = nn.functional.softmax(x, dim=1)
    c = torch.mm(x, x).t().contiguous()
    d = x.add(1).relu()
    e = my_gelu(helper())
    g = aten.add.Tensor(x, x)
    "s".join([])
    return self.assertEqual(a, b)
