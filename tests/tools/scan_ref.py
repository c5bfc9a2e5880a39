#!/usr/bin/env python3
"""The reference for the Python scanner (selector/src/scan*.c): prints, from Python's own parser
(the `ast` module, standard library only), the facts the scanner claims about each file, in the
normalised text form tests/tools/scan_dump.c prints from the scanner. One fact a line:

  file PATH
  skipped                            the file is not UTF-8 (the scanner skips it too)
  unparsable MESSAGE                 Python cannot parse it (nothing to compare)
  class QUALNAME FIRST LAST deco=LINE
  base QUALNAME INDEX TEXT           a base or keyword (kw=TEXT), whitespace removed
  def QUALNAME FIRST LAST deco=LINE async=0|1 decorators=NAME,NAME
  import SCOPE level=N module=M name=N local=L
  instantiate device|parametrized CLASS LINE
  opinfo KIND FIRST LAST aten=NAME|- variant=NAME|- dtypes=D,D|- sfunc=NAME|- samples=S;S|- name=NAME
  global SCOPE NAME LINE             a module-level (SCOPE "-") or class-level binding

What the scanner means, and how the reference says the same:
  - QUALNAME joins the names of the enclosing defs and classes with "." ("C.m", "f.Local.m"),
    without Python's "<locals>".
  - FIRST is the `def`/`class` line, LAST the last line of the last statement of the body
    (ast's end_lineno: a closing bracket or the end of a triple-quoted string counts, trailing
    comments and blank lines do not); deco= is the first decorator's `@` line, FIRST without.
  - A decorator's NAME is the dotted name its expression starts with when the rest is calls,
    subscripts and attributes only ("unittest.skipIf" for @unittest.skipIf(...), "deco" for
    @deco[0]); else the whole expression after '@' ("(lambda f: f)" with its parentheses,
    "x if y else z").
  - Bases: the arguments of the class line in source order, keywords as name=value.
  - Imports: every import statement, with SCOPE the qualname of the innermost enclosing def
    ("-" at module or class level); `import a.b.c` binds local a, `import a.b as c` local c,
    a star import local "*". module= is the absolute module, or level dots and the rest.
  - instantiate_device_type_tests / instantiate_parametrized_tests: calls that are whole
    statements outside any def or class (at any depth of if/try/with), CLASS the first
    argument's text.
  - Op database entries: every call of a name ending in "Info" (not a def or class line)
    whose first argument is one string literal, or, for the known kinds (OpInfo,
    UnaryUfuncInfo, ...), that has name="..."; KIND the callee's last name, FIRST its line,
    LAST the closing parenthesis's line, aten_name= and variant_test_name= when string literals;
    dtypes= evaluated (a tuple or list of torch dtypes, or one of common_dtype's helpers such as
    all_types_and(torch.half)) as canonical names in a fixed order; sfunc= sample_inputs_func=
    when a plain name; samples= the shapes that function (a module-level def of the file) builds:
    its parenthesized tuples of integer literals and S/M/L/XS (the file's module-level `S = 5`,
    else PyTorch's 5/10/20/3) and the positional arguments of a call of a name starting with
    "make" when they are all such elements (make_arg(S, S, device=d)), first 16 distinct in
    source order, "(5, 10);(5,);()".
  - Globals: a name bound by an assignment statement that starts its line (`NAME = ...`, also
    `NAME = OTHER = ...`, `NAME: T = ...`, `NAME += ...`) at module level or in a class body
    (SCOPE the class's qualname), at any depth of if/for/while/with/try/match but not inside
    a def; LINE the first such binding of that name in that scope.
  - Not compared: the dotted names a body uses (the scanner's are an approximation: it resolves
    names through imports without scoping, keeps `.attr` of anything else, and includes
    the headers of nested defs), body hashes, decorator arguments.
"""
import ast
import io
import sys
import tokenize

INSTANTIATE = {
    "instantiate_device_type_tests": "device",
    "instantiate_parametrized_tests": "parametrized",
}


def squeeze(s):
    return "".join(s.split())


def dotted(e):
    """'a.b.c' for Name/Attribute chains, else None."""
    parts = []
    while isinstance(e, ast.Attribute):
        parts.append(e.attr)
        e = e.value
    if not isinstance(e, ast.Name):
        return None
    parts.append(e.id)
    return ".".join(reversed(parts))


OPINFO_KINDS = {
    "OpInfo", "UnaryUfuncInfo", "BinaryUfuncInfo", "ReductionOpInfo",
    "ShapeFuncInfo", "ForeachFuncInfo", "SpectralFuncInfo",
}


def leading_dotted(e):
    """The dotted name an expression starts with: a.b for a.b(c).d[0], or None."""
    while True:
        name = dotted(e)
        if name is not None:
            return name
        if isinstance(e, ast.Attribute):
            e = e.value
        elif isinstance(e, ast.Call):
            e = e.func
        elif isinstance(e, ast.Subscript):
            e = e.value
        else:
            return None


DTYPE_ORDER = ["float16", "bfloat16", "float32", "float64", "complex32", "complex64",
               "complex128", "uint8", "int8", "int16", "int32", "int64", "bool"]
DTYPE_ALIAS = {"half": "float16", "float": "float32", "double": "float64", "chalf": "complex32",
               "cfloat": "complex64", "cdouble": "complex128", "short": "int16", "int": "int32",
               "long": "int64"}
_FL, _CX = {"float32", "float64"}, {"complex64", "complex128"}
_IN = {"uint8", "int8", "int16", "int32", "int64"}
DTYPE_HELPERS = {
    "empty_types": set(), "custom_types": set(),
    "floating_types": _FL, "floating_types_and": _FL,
    "floating_and_complex_types": _FL | _CX, "floating_and_complex_types_and": _FL | _CX,
    "integral_types": _IN, "integral_types_and": _IN,
    "all_types": _FL | _IN, "all_types_and": _FL | _IN,
    "all_types_and_complex": _FL | _IN | _CX, "all_types_and_complex_and": _FL | _IN | _CX,
    "complex_types": _CX, "complex_types_and": _CX,
}


def torch_dtype(e):
    name = dotted(e)
    if not name or not name.startswith("torch."):
        return None
    n = name[6:]
    n = DTYPE_ALIAS.get(n, n)
    return n if n in DTYPE_ORDER else None


def eval_dtypes(e):
    """dtypes= as the scanner evaluates it, or None."""
    items = None
    if isinstance(e, (ast.Tuple, ast.List)):
        items, base = e.elts, set()
    elif isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in DTYPE_HELPERS \
            and not e.keywords:
        items, base = e.args, set(DTYPE_HELPERS[e.func.id])
    elif torch_dtype(e):
        items, base = [e], set()
    if items is None:
        return None
    for x in items:
        d = torch_dtype(x)
        if d is None:
            return None
        base.add(d)
    return ",".join(d for d in DTYPE_ORDER if d in base)


def size_consts(tree):
    c = {"S": 5, "M": 10, "L": 20, "XS": 3}
    for st in tree.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                isinstance(st.targets[0], ast.Name) and st.targets[0].id in c and \
                isinstance(st.value, ast.Constant) and type(st.value.value) is int and \
                st.col_offset == 0:
            c[st.targets[0].id] = st.value.value
    return c


def shape_dims(elts, consts):
    dims = []
    for x in elts:
        if isinstance(x, ast.Constant) and type(x.value) is int and 0 <= x.value <= 1 << 20:
            dims.append(x.value)
        elif isinstance(x, ast.Name) and x.id in consts:
            dims.append(consts[x.id])
        else:
            return None
    return dims


def paren_after(source_lines, line, col):
    """The (line, byte column) of the first '(' at or after a position, over blanks."""
    while line <= len(source_lines):
        b = source_lines[line - 1].encode()
        while col < len(b) and b[col:col + 1] in (b" ", b"\t"):
            col += 1
        if col < len(b):
            return (line, col)
        line, col = line + 1, 0
    return (line, col)


def keyword_value(node, parents):
    """Whether node is a call's keyword argument other than shape=/size= (`args=(1,)`)."""
    k = parents.get(node)
    return isinstance(k, ast.keyword) and k.arg is not None and k.arg not in ("shape", "size")


def argument_tuple(n, parents):
    """A sample's arguments rather than a tensor's shape: a keyword argument's value, an element
    of a tuple or list that is one (`args=((1, 2),)`), or a dict's value (`{'dim': (0,)}`)."""
    p = parents.get(n)
    if keyword_value(n, parents):
        return True
    if isinstance(p, (ast.Tuple, ast.List)) and keyword_value(p, parents):
        return True
    return isinstance(p, ast.Dict) and any(v is n for v in p.values)


def product_factor(n, parents, consts):
    """N of `N * (...)` or `(...) * N` (an integer or a size constant); 1 when the tuple is not
    multiplied, None when multiplied by anything else."""
    p = parents.get(n)
    if not (isinstance(p, ast.BinOp) and isinstance(p.op, ast.Mult)):
        return 1
    other = p.right if p.left is n else p.left
    dims = shape_dims([other], consts)
    return dims[0] if dims else None


def sample_shapes(fn, consts, source_lines):
    """The literal shapes a sample function's header and body build: parenthesized tuples of
    integers and size constants, and the leading arguments of a make... factory's call."""
    found = []
    nodes = [n for part in [fn.args] + fn.body for n in ast.walk(part)]
    parents = {ch: p for p in nodes for ch in ast.iter_child_nodes(p)}
    for n in nodes:
        if isinstance(n, ast.Call):
            f = n.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if not name.startswith("make") or not n.args or len(n.args) > 8 or \
                    any(k.arg is None for k in n.keywords):
                continue
            dims = shape_dims(n.args, consts)
            if dims is not None:
                found.append((paren_after(source_lines, f.end_lineno, f.end_col_offset), dims))
            continue
        if not isinstance(n, ast.Tuple) or len(n.elts) > 8:
            continue
        if source_lines[n.lineno - 1].encode()[n.col_offset:n.col_offset + 1] != b"(":
            continue
        if argument_tuple(n, parents):
            continue
        dims = shape_dims(n.elts, consts)
        times = product_factor(n, parents, consts)
        if dims is not None and times is not None and 1 <= times and len(dims) * times <= 8:
            found.append(((n.lineno, n.col_offset), dims * times))
    out = []
    for _, dims in sorted(found):
        text = "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"
        if text not in out and len(out) < 16:
            out.append(text)
    return ";".join(out) or None


class Facts(ast.NodeVisitor):
    def __init__(self, source, tree=None):
        self.source = source
        self.source_lines = source.splitlines(keepends=True)  # split once, read per entry
        self.plain_lines = source.splitlines()
        self.shapes_of = {}  # sample function name -> its shapes (functions are shared)
        self.module_defs = {}
        self.consts = {}
        if tree is not None:
            for st in tree.body:
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.module_defs.setdefault(st.name, st)
            self.consts = size_consts(tree)
        self.names = []  # enclosing def/class names
        self.functions = []  # enclosing def qualnames
        self.lines = []

    def qual(self, name):
        return ".".join(self.names + [name])

    def segment(self, node):
        return ast.get_source_segment(self.source, node) or ""

    def decorator_text(self, d):
        """The decorator's whole expression after '@' ("(lambda f: f)", parentheses kept):
        the tokens from the one after '@' to the last before the end of its line(s)."""
        start = "".join(self.source_lines[d.lineno - 1 : d.end_lineno])
        at = start.rfind("@", 0, d.col_offset + 1)
        toks = []
        try:
            for t in tokenize.generate_tokens(io.StringIO(start[at + 1 :]).readline):
                if t.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT):
                    continue
                if t.type == tokenize.ENDMARKER:
                    break
                toks.append(t.string)
        except tokenize.TokenError:
            pass
        return "".join(toks)

    def deco_line(self, node):
        return min([d.lineno for d in node.decorator_list] + [node.lineno])

    def visit_ClassDef(self, node):
        q = self.qual(node.name)
        self.lines.append(f"class {q} {node.lineno} {node.end_lineno} deco={self.deco_line(node)}")
        # positional and keyword arguments in source order ("name=value", "*x", "**x")
        args = sorted(node.bases + node.keywords, key=lambda a: (a.lineno, a.col_offset))
        for k, a in enumerate(args):
            self.lines.append(f"base {q} {k} {squeeze(self.segment(a))}")
        for e in node.decorator_list + node.bases + node.keywords:
            self.visit(e)
        self.names.append(node.name)
        for s in node.body:
            self.visit(s)
        self.names.pop()

    def visit_FunctionDef(self, node, is_async=0):
        q = self.qual(node.name)
        decos = []
        for d in node.decorator_list:
            name, text = leading_dotted(d), squeeze(self.decorator_text(d))
            decos.append(name if name is not None and text.startswith(name) else text)
        self.lines.append(
            f"def {q} {node.lineno} {node.end_lineno} deco={self.deco_line(node)} "
            f"async={is_async} decorators={','.join(decos)}"
        )
        for e in node.decorator_list + [node.args] + ([node.returns] if node.returns else []):
            self.visit(e)
        self.names.append(node.name)
        self.functions.append(q)
        for s in node.body:
            self.visit(s)
        self.functions.pop()
        self.names.pop()

    def visit_AsyncFunctionDef(self, node):
        self.visit_FunctionDef(node, 1)

    def scope(self):
        return self.functions[-1] if self.functions else "-"

    def visit_Import(self, node):
        for a in node.names:
            local = a.asname if a.asname else a.name.split(".")[0]
            self.lines.append(
                f"import {self.scope()} level=0 module={a.name} name=- local={local}"
            )

    def visit_ImportFrom(self, node):
        module = "." * node.level + (node.module or "")
        for a in node.names:
            local = a.asname if a.asname else a.name
            self.lines.append(
                f"import {self.scope()} level={node.level} module={module} "
                f"name={a.name} local={local}"
            )

    def one_string(self, e):
        """The value of `e` when it is a single plain string literal token, else None."""
        if not isinstance(e, ast.Constant) or not isinstance(e.value, str):
            return None
        toks = [t for t in tokenize.generate_tokens(io.StringIO(self.segment(e)).readline)
                if t.type == tokenize.STRING]
        return e.value if len(toks) == 1 else None

    def visit_Call(self, node):
        f = node.func
        kind = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if kind.endswith("Info"):
            kw = {k.arg: self.one_string(k.value) for k in node.keywords if k.arg}
            first = self.one_string(node.args[0]) if node.args else None
            name = first if first is not None else (kw.get("name") if kind in OPINFO_KINDS else None)
            if name is not None:
                raw = {k.arg: k.value for k in node.keywords if k.arg}
                dt = eval_dtypes(raw["dtypes"]) if "dtypes" in raw else None
                sf = raw.get("sample_inputs_func")
                sf = sf.id if isinstance(sf, ast.Name) else None
                fn = self.module_defs.get(sf) if sf else None
                if fn and sf not in self.shapes_of:
                    self.shapes_of[sf] = sample_shapes(fn, self.consts, self.plain_lines)
                smp = self.shapes_of.get(sf) if fn else None
                self.lines.append(
                    f"opinfo {kind} {f.end_lineno} {node.end_lineno} "
                    f"aten={kw.get('aten_name') or '-'} "
                    f"variant={kw.get('variant_test_name') or '-'} "
                    f"dtypes={dt or '-'} sfunc={sf or '-'} samples={smp or '-'} name={name}"
                )
        self.generic_visit(node)

    def visit_Expr(self, node):
        call = node.value
        if not self.names and isinstance(call, ast.Call):
            name = dotted(call.func)
            kind = INSTANTIATE.get(name.rsplit(".", 1)[-1]) if name else None
            if kind:
                # The class: the first positional argument, else the keyword PyTorch's
                # signatures name it by.
                named = [k.value for k in call.keywords
                         if k.arg in ("generic_test_class", "generic_cls")]
                first = call.args[0] if call.args else (named[0] if named else None)
                cls = squeeze(self.segment(first)) if first is not None else ""
                self.lines.append(f"instantiate {kind} {cls} {node.lineno}")
        self.generic_visit(node)


COMPOUND_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def bindings(body, scope, lines, out, seen):
    """The global facts of a module's or a class's body (see the docstring)."""
    for s in body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(s, ast.ClassDef):
            bindings(s.body, s.name if scope == "-" else f"{scope}.{s.name}", lines, out, seen)
            continue
        name = None
        if hasattr(s, "col_offset") and lines[s.lineno - 1][: s.col_offset].strip() == "":
            if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name):
                name = s.targets[0].id
            elif isinstance(s, ast.AnnAssign) and s.value is not None and isinstance(
                s.target, ast.Name
            ):
                name = s.target.id
            elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
                name = s.target.id
        if name and (scope, name) not in seen:
            seen.add((scope, name))
            out.append(f"global {scope} {name} {s.lineno}")
        for field in COMPOUND_BODIES:
            for sub in getattr(s, field, None) or []:
                bindings(getattr(sub, "body", None) or [] if not isinstance(sub, ast.stmt)
                         else [sub], scope, lines, out, seen)


def facts(path):
    out = [f"file {path}"]
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return out + ["skipped"]
    try:
        tree = ast.parse(data, filename=path)
    except (SyntaxError, ValueError) as e:
        return out + [f"unparsable {type(e).__name__}: {e}"]
    if text.startswith("\ufeff"):
        text = text[1:]
    v = Facts(text, tree)
    v.visit(tree)
    bindings(tree.body, "-", text.splitlines() or [""], v.lines, set())
    return out + v.lines


def main(argv):
    if len(argv) < 2:
        print("usage: scan_ref.py FILE...", file=sys.stderr)
        return 2
    for path in argv[1:]:
        print("\n".join(facts(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
