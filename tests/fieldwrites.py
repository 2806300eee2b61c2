#!/usr/bin/env python3
"""Hold src/ to "one owner per struct": no file writes the fields of a
struct defined in another folder.

Usage: fieldwrites.py SRCDIR

Reads the struct definitions of SRCDIR's layer folders (the folder of the
file that defines a struct owns it), then every assignment in their .c
files (=, op=, ++, --) whose left side ends in a field, `v->f`, `v.f`
or a chain `v->a.b`, with v a parameter, local or file-level variable
declared `struct NAME`.  A write to a struct owned by another folder is
printed as `FILE:LINE: writes struct NAME (folder/) field F`.

Exempt are the structs SRCDIR/PARAMS lists, one name a line: parameter
blocks (options and callbacks that a caller fills for one call and the
callee only reads) and counter blocks that several layers add to by
design; each line says why.  Exit 0 when nothing is printed, 1 otherwise.

This reads text, not a parse tree: a write through a cast, a macro or an
untyped expression is not seen.  It keeps the rule from sliding back; it
does not prove it.
"""
import os
import re
import sys

IDENT = r"[A-Za-z_]\w*"
STRUCT_DEF = re.compile(r"\bstruct\s+(" + IDENT + r")\s*\{")
DECL = re.compile(r"\bstruct\s+(" + IDENT + r")\s*((?:\*\s*(?:const\s+)?)*)"
                  r"(" + IDENT + r")\s*(?=[;,)=\[])")
# v->a.b[i] = ..., v.a += ..., v->n++ ; and ++v->n
CHAIN = r"(" + IDENT + r")((?:\s*(?:->|\.)\s*" + IDENT + r"(?:\s*\[[^\]\[]*\])*)+)"
POST = re.compile(CHAIN + r"\s*(=(?!=)|\+=|-=|\*=|/=|%=|\|=|&=|\^=|<<=|>>=|"
                  r"\+\+|--)")
PRE = re.compile(r"(?:\+\+|--)\s*" + CHAIN)
LINK = re.compile(r"(->|\.)\s*(" + IDENT + r")")


def strip(text):
    """Comments, strings and character constants blanked (newlines kept),
    and preprocessor lines dropped."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    lines = "".join(out).split("\n")
    keep, cont = [], False
    for line in lines:
        pre = cont or line.lstrip().startswith("#")
        cont = pre and line.rstrip().endswith("\\")
        keep.append("" if pre else line)
    return "\n".join(keep)


def body_at(text, start):
    """The text between the brace at start and its match."""
    depth = 0
    for j in range(start, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1:j]
    return text[start + 1:]


def structs(files):
    """name -> (folder, {field: struct type or None})."""
    out = {}
    for path, folder, text in files:
        for m in STRUCT_DEF.finditer(text):
            body = body_at(text, m.end() - 1)
            # Nested struct/union bodies: their fields count as the
            # outer struct's (anonymous unions), named nested ones too.
            fields = {}
            for stmt in body.split(";"):
                stmt = re.sub(r"\{[^{}]*\}", " ", stmt).strip()
                if not stmt:
                    continue
                fp = re.search(r"\(\s*\*\s*(" + IDENT + r")\s*\)", stmt)
                if fp:
                    fields[fp.group(1)] = None
                    continue
                t = re.match(r"(?:const\s+)?struct\s+(" + IDENT + r")", stmt)
                for part in stmt.split(","):
                    nm = re.search(r"(" + IDENT + r")\s*(?:\[[^\]]*\])*"
                                   r"\s*(?::\s*\d+)?\s*$", part)
                    if nm:
                        ptr = "*" in part
                        fields[nm.group(1)] = (t.group(1) if t else None,
                                               ptr)
            out.setdefault(m.group(1), (folder, fields))
    return out


def var_types(text):
    """Every `struct T [*]v` declared in text: v -> T (the last wins;
    names are reused with one type in practice)."""
    return {m.group(3): m.group(1) for m in DECL.finditer(text)}


def resolve(defs, vtype, chain):
    """The struct whose field the chain's last link names, or None; None
    too for `v->p[i]` with p a pointer: that writes what p points to,
    not the field."""
    links = LINK.findall(re.sub(r"\[[^\]\[]*\]", "[]", chain))
    cur = vtype
    for k, (_, field) in enumerate(links):
        d = defs.get(cur)
        if d is None or field not in d[1]:
            return None, None
        ft = d[1][field]
        if k == len(links) - 1:
            if ft and ft[1] and chain.rstrip().endswith("]"):
                return None, None
            return cur, field
        cur = ft[0] if ft else None
    return None, None


def main(srcdir):
    files = []
    for folder in sorted(os.listdir(srcdir)):
        d = os.path.join(srcdir, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                p = os.path.join(d, name)
                with open(p, encoding="utf-8") as f:
                    files.append((p, folder, strip(f.read())))
    defs = structs(files)
    exempt = set()
    params = os.path.join(srcdir, "PARAMS")
    with open(params, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name = line.split()[0]
            if name not in defs:
                print(f"{params}:{n}: struct {name} is defined nowhere")
                return 2
            exempt.add(name)
    bad = 0
    for path, folder, text in files:
        if not path.endswith(".c"):
            continue
        types = var_types(text)
        seen = set()
        for rx in (POST, PRE):
            for m in rx.finditer(text):
                var, chain = m.group(1), m.group(2)
                t = types.get(var)
                if t is None:
                    continue
                owner, field = resolve(defs, t, chain)
                if owner is None or owner in exempt:
                    continue
                ofolder = defs[owner][0]
                if ofolder == folder:
                    continue
                line = text.count("\n", 0, m.start()) + 1
                if (line, owner, field) in seen:
                    continue
                seen.add((line, owner, field))
                print(f"{os.path.relpath(path, srcdir)}:{line}: writes "
                      f"struct {owner} ({ofolder}/) field {field}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
