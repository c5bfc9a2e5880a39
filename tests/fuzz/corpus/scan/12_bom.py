import torch
def f():
    return torch.add(1, 2)
