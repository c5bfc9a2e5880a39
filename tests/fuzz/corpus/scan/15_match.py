match = 1
case = 2
def f(cmd):
    match cmd:
        case [x, y]:
            return x
        case {"k": v}:
            return v
        case _:
            return None
def g():
    return match + case
