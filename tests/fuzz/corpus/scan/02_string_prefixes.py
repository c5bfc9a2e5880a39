a = rb"\x00def"
b = Rb'class'
c = f"{a}"
d = fr"\d{c}"
e = u"def nope():"
f = BR"""
def nope2(): pass
"""
def real(): return (a, b, c, d, e, f)
