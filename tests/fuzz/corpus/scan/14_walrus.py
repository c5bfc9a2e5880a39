def f(data):
    if (n := len(data)) > 10:
        return n
    while chunk := data.read():
        pass
def g(): pass
