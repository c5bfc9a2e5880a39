def f():
    return 'ÿş'
