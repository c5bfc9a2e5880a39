import torch
def outer():
    def inner():
        def innermost():
            return torch.sin(1)
        return innermost
    class Local:
        def meth(self):
            return torch.cos(2)
    return inner, Local
def after(): pass
