def f():
    pass
class C:
    def m(self):
        return 1