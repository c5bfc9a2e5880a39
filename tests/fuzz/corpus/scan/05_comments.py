# def commented(): pass
def f():  # a comment with "quotes
    # class Nope:
    return 1  # ) unbalanced in comment
def g():
    pass
