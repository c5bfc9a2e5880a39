from typing import Callable
x: int = 1
def f(a: int, b: "list[int]" = [1, 2], *, c: Callable[[int], int] = None) -> dict[str, int]:
    y: list[int] = []
    return {}
def g[T](v: T) -> T:
    return v
class K[T](Base[T], metaclass=Meta):
    attr: T
