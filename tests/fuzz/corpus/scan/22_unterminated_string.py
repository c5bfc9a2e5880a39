def f():
    s = "no end
    return 1
def g():
    t = """never closed
def h(): pass
