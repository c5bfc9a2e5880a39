import os, \
    sys
def f(a,
      b):
    return a + \
        b
def g(): pass
