class A: pass
class B(A): x = 1
class C:
    class D: pass
    def m(self): return 1
def z(): pass
