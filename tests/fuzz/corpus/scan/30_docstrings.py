def f():
    """Docstring with def g(): inside
    and class H: too."""
    return 1
class C:
    '''class doc'''
    def m(self):
        r"""raw \""" still in"""
        return 2
