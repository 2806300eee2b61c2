#!/usr/bin/env python3
"""Hold src/ to its layers (src/LAYERS).

Usage: layering.py SRCDIR

Reads every `#include "..."` of the .c and .h files in SRCDIR's layer
folders and prints `FILE:LINE: folder includes "other/x.h" (other is not
below folder in LAYERS)` for each include that LAYERS does not allow,
and for includes that name no folder (every project header is included
by its layer path).

Inside a folder, the .c files may call one another, but never in a
circle of more than MAX_CIRCLE files (issue 40: eight files of files/
could not be read or changed one without the others).  A file calls
another when it names a function that one defines (not static, its name
at the start of a line); a circle is a strongly connected part of those
calls, printed as `FOLDER: A.c B.c ... call one another in a circle of
N files (at most 3)`, with one call of each file on the way.

Exit 0 when every include is allowed and no circle is too large, 1
otherwise, 2 on a malformed LAYERS.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fieldwrites import strip  # noqa: E402  comments and strings blanked

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
MAX_CIRCLE = 3
DEFINES = re.compile(r"^([A-Za-z_]\w*)\(", re.M)
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def read_layers(path):
    allowed = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, sep, uses = line.partition(":")
            name = name.strip()
            if not sep or not re.fullmatch(r"[a-z_]+", name):
                sys.exit(f"{path}:{n}: expected 'folder: lower folders...'")
            deps = uses.split()
            for d in deps:
                if d not in allowed:
                    sys.exit(f"{path}:{n}: {name} uses {d}, which is not "
                             "a layer listed above it")
            allowed[name] = set(deps)
    return allowed


def check(srcdir):
    allowed = read_layers(os.path.join(srcdir, "LAYERS"))
    bad = 0
    for layer in sorted(allowed):
        top = os.path.join(srcdir, layer)
        for dirpath, _, files in os.walk(top):
            for fn in sorted(files):
                if not fn.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, fn)
                bad += check_file(path, layer, allowed)
    for fn in sorted(os.listdir(srcdir)):
        path = os.path.join(srcdir, fn)
        # What a build in the source tree leaves: automake's .deps and
        # .dirstamp, no source of a layer.
        if fn.startswith("."):
            continue
        if fn.endswith((".c", ".h")) and fn != "main.c":
            print(f"{path}: only main.c may sit at the top of src/")
            bad += 1
        elif os.path.isdir(path) and fn not in allowed:
            print(f"{path}: folder is not a layer in LAYERS")
            bad += 1
    for layer in sorted(allowed):
        bad += check_circles(os.path.join(srcdir, layer))
    return bad


def calls(folder):
    """{file: {other file of folder: [the functions of it it names]}}."""
    texts = {}
    for fn in sorted(os.listdir(folder)):
        if fn.endswith(".c"):
            with open(os.path.join(folder, fn), encoding="utf-8",
                      errors="replace") as f:
                texts[fn] = strip(f.read())
    owner = {}
    for fn, text in texts.items():
        for m in DEFINES.finditer(text):
            start = text.rfind("\n", 0, max(m.start() - 1, 0)) + 1
            if not text[start:m.start()].startswith("static"):
                owner.setdefault(m.group(1), fn)
    graph = {}
    for fn, text in texts.items():
        graph[fn] = {}
        for name in sorted(set(IDENT.findall(text))):
            o = owner.get(name)
            if o is not None and o != fn:
                graph[fn].setdefault(o, []).append(name)
    return graph


def circles(graph):
    """The strongly connected parts of graph (Tarjan's), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            out.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check_circles(folder):
    if not os.path.isdir(folder):
        return 0
    graph = calls(folder)
    bad = 0
    for part in circles(graph):
        if len(part) <= MAX_CIRCLE:
            continue
        print(f"{folder}: {' '.join(part)} call one another in a circle "
              f"of {len(part)} files (at most {MAX_CIRCLE})")
        for fn in part:
            for o in sorted(graph[fn]):
                if o in part:
                    print(f"  {fn} -> {o} ({graph[fn][o][0]})")
                    break
        bad += 1
    return bad


def check_file(path, layer, allowed):
    bad = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m or m.group(1) == "config.h":
                continue
            inc = m.group(1)
            folder = inc.split("/", 1)[0] if "/" in inc else None
            if folder is None:
                print(f'{path}:{n}: include "{inc}" names no layer folder')
                bad += 1
            elif folder == layer:
                continue
            elif folder not in allowed:
                print(f'{path}:{n}: include "{inc}": {folder} is not a '
                      "layer in LAYERS")
                bad += 1
            elif folder not in allowed[layer]:
                print(f'{path}:{n}: {layer} includes "{inc}" '
                      f"({folder} is not below {layer} in LAYERS)")
                bad += 1
    return bad


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: layering.py SRCDIR")
    sys.exit(1 if check(sys.argv[1]) else 0)
