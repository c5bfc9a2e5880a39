x = 0x1F + 1e-5 + 1_000.5j + .5 + 0o17 + 0b101
def f():
    return x if x else -x
