#!/usr/bin/env python3
"""Checks the rooms' include rule: which room may include which, as docs/architecture.md's table
"Who may include whom" says it (the table is read from that page, so the rule is written once).

Every `#include "..."` of every C file of a room is resolved the way the build resolves it: beside
the including file first, then in its own room's folders, then in a room's public folder (`<folder>/include/`), then from the
repository's root and from relay/ (how an include reaching into another room's private files would
be spelt). A file may include its own room's files, public or private, and another room's public
headers when the table lets it; anything else, or an include that resolves to nothing, fails with
file:line and the rule it breaks.

Usage: includes.py [ROOT]      (ROOT: the repository; default: this script's ../..)
Exit: 0 the rule holds, 1 it is broken (each break on stderr), 2 the table cannot be read."""
import os
import re
import sys

TABLE_TITLE = "Who may include whom"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_table(root):
    """{room: (folders, allowed rooms)} from the architecture page's table."""
    path = os.path.join(root, "docs", "architecture.md")
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        sys.exit(f"includes: {path}: {e}")
    start = next((i for i, l in enumerate(lines) if l.startswith("#") and TABLE_TITLE in l),
                 None)
    if start is None:
        print(f"includes: {path}: no section titled '{TABLE_TITLE}'", file=sys.stderr)
        sys.exit(2)
    rooms = {}
    for l in lines[start + 1:]:
        if l.startswith("#"):
            break
        if not l.startswith("|") or set(l) <= set("|-: "):
            continue
        cells = [c.strip() for c in l.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] == "room":
            continue
        room = cells[0].strip("`")
        folders = re.findall(r"`([^`]+)`", cells[1])
        allowed = [] if cells[2] in ("-", "—", "nothing") else \
            [a.strip().strip("`") for a in cells[2].split(",")]
        rooms[room] = (folders, allowed)
    if not rooms:
        print(f"includes: {path}: the table under '{TABLE_TITLE}' has no rows", file=sys.stderr)
        sys.exit(2)
    for room, (_, allowed) in rooms.items():
        for a in allowed:
            if a not in rooms:
                print(f"includes: {path}: room {room} may include '{a}', which is no room",
                      file=sys.stderr)
                sys.exit(2)
    return rooms


def room_of(rel, rooms):
    """The room a repository-relative path belongs to, or None; the longest folder wins."""
    best, best_len = None, -1
    for room, (folders, _) in rooms.items():
        for f in folders:
            f = f.rstrip("/")
            if (rel == f or rel.startswith(f + "/")) and len(f) > best_len:
                best, best_len = room, len(f)
    return best


def is_public(rel, rooms, room):
    return any(rel.startswith(f.rstrip("/") + "/include/") for f in rooms[room][0])


def resolve(root, including, room, name, rooms):
    """The repository-relative path `name` resolves to from `including` (of `room`), or None."""
    cands = [os.path.join(os.path.dirname(including), name)]
    cands += [os.path.join(f, name) for f in rooms[room][0] if not f.endswith(".c")]
    for folders, _ in rooms.values():
        cands += [os.path.join(f.rstrip("/"), "include", name) for f in folders
                  if not f.endswith(".c")]
    cands += [name, os.path.join("relay", name)]
    for c in cands:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c
    return None


def sources(root, rooms):
    for room, (folders, _) in rooms.items():
        for f in folders:
            full = os.path.join(root, f)
            if os.path.isfile(full):
                yield room, f
                continue
            for d, dirs, files in os.walk(full):
                dirs[:] = sorted(x for x in dirs if not x.startswith("."))
                for fn in sorted(files):
                    if fn.endswith((".c", ".h")):
                        rel = os.path.relpath(os.path.join(d, fn), root)
                        if room_of(rel, rooms) == room:  # a nested room's files are its own
                            yield room, rel


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    rooms = read_table(root)
    broken = checked = 0
    for room, rel in sources(root, rooms):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                checked += 1
                name = m.group(1)
                target = resolve(root, rel, room, name, rooms)
                where = f"{rel}:{lineno}"
                if target is None:
                    print(f"{where}: #include \"{name}\" resolves to no file of the repository",
                          file=sys.stderr)
                    broken += 1
                    continue
                other = room_of(target, rooms)
                if other is None or other == room:
                    continue
                if not is_public(target, rooms, other):
                    print(f"{where}: #include \"{name}\" reaches {target}, a private file of "
                          f"room {other}; a room may include only another room's public "
                          f"headers (<folder>/include/)", file=sys.stderr)
                    broken += 1
                elif other not in rooms[room][1]:
                    print(f"{where}: #include \"{name}\": room {room} may not include room "
                          f"{other} (docs/architecture.md, '{TABLE_TITLE}': {room} may "
                          f"include {', '.join(rooms[room][1]) or 'nothing of ours'})",
                          file=sys.stderr)
                    broken += 1
    print(f"includes: {checked} includes in {len(rooms)} rooms, {broken} breaking the rule")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
