def f():
    x = foo(1, 2
def g():
    return 2
class C:
    def m(self):
        return 3
