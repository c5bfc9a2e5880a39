# café
def f(): pass
