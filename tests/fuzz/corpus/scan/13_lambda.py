f = lambda x: x + 1
def g():
    key = lambda a, b=1: (a, b)
    return sorted([], key=lambda v: v.size)
class C: pass
