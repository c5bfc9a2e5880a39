def f():
    x = [
1,
2,
    ]
    return (x,
def_not)
def g(): pass
