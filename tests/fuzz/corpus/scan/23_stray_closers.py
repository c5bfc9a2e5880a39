def f():
    return 1)
def g():
    x = [1, 2}]
    return x
def h(): pass
