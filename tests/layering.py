#!/usr/bin/env python3
"""Hold src/ to its layers (src/LAYERS).

Usage: layering.py SRCDIR

Reads every `#include "..."` of the .c and .h files in SRCDIR's layer
folders and prints `FILE:LINE: folder includes "other/x.h" (other is not
below folder in LAYERS)` for each include that LAYERS does not allow,
and for includes that name no folder (every project header is included
by its layer path).  Exit 0 when every include is allowed, 1 otherwise,
2 on a malformed LAYERS.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


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
