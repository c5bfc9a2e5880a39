def real(x):
    s = f"{x["key"]} and {f'{x!r:>{10}}'} {{literal}} {x:'>10}"
    t = f"""{
        x + 1
    } def not_a_def(): """
    return s, t
def after(): pass
