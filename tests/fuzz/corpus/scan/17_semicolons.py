import os; import sys as system; from a import b
def f(): x = 1; return x
class C: a = 1; b = 2
instantiate_parametrized_tests(C); y = 3
