x = """def fake():
    pass
"""
y = '''class Fake:
    '''
def real():
    s = """a ''' b
    def also_fake(): pass"""
    return s
