from . import sibling
from .. import parent_mod
from ..pkg.mod import thing as t
from ....toofar import x
import a.b.c
import a.b as ab
from a.b import c as d, e
from .star import *
def f():
    return t.run() + ab.x + d.y + e + sibling.z + a.b.c.w
