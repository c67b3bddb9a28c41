"""The text rewrites of ``tools/relayout.py``: pure functions from a file's text to its text after
the move (imports, dotted names, paths, backticked names, a test's ``Path(__file__)``)."""

from __future__ import annotations

import ast
import re
import sys

from relayout_table import GROUPS, PACKAGE


def dotted(rel: str) -> str:
    parts = rel.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([PACKAGE, *parts])


def absolute_imports(text: str, module: str, is_package: bool) -> str:
    """``text`` with every relative import written from the package root."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    base = module.split(".") if is_package else module.split(".")[:-1]
    edits: list[tuple[int, int, str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            root = base[: len(base) - node.level + 1]
            absolute = ".".join([*root, *([node.module] if node.module else [])])
            relative = "." * node.level + (node.module or "")
            edits.append((node.lineno - 1, node.col_offset, relative, absolute))
    for line, col, relative, absolute in sorted(edits, reverse=True):
        head, tail = lines[line][:col], lines[line][col:]
        new_tail = re.sub(rf"^from\s+{re.escape(relative)}(?=\s+import\b)", f"from {absolute}", tail)
        if new_tail == tail:
            sys.exit(f"cannot rewrite the import at {module}:{line + 1}: {tail.strip()}")
        lines[line] = head + new_tail
    text = "".join(lines)
    if module == PACKAGE:  # the lazy table: "Name": ".module" -> "Name": "sourcewise.module"
        text = re.sub(r'(":\s*")\.([\w.]+")', rf"\1{PACKAGE}.\2", text)
    return text


# --- 3. modules imported by name from their package -----------------------------------------------


def split_module_imports(text: str, old_modules: set[str]) -> str:
    """``from P import m`` where ``P.m`` moves becomes ``import P.m as m`` (step 3 renames it, step 6
    writes it back as a from-import), so that the module and its new parent are found by name."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    edits = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
            continue
        if not node.module.startswith(PACKAGE):
            continue
        moved = [a for a in node.names if f"{node.module}.{a.name}" in old_modules]
        if not moved:
            continue
        segment = "".join(lines[node.lineno - 1 : node.end_lineno])
        indent = segment[: len(segment) - len(segment.lstrip())]
        # Comments stay with the name on their line (a noqa comment says why that import is there).
        span = range(node.lineno, (node.end_lineno or node.lineno) + 1)
        said = {n: lines[n - 1].split("#", 1)[1].rstrip() for n in span if "#" in lines[n - 1]}
        out = [
            f"{indent}import {node.module}.{a.name} as {a.asname or a.name}"
            + (f"  #{said.pop(a.lineno)}" if a.lineno in said and a.lineno != node.lineno else "")
            for a in moved
        ]
        rest = [a for a in node.names if a not in moved]
        if rest:
            names = ", ".join(f"{a.name} as {a.asname}" if a.asname else a.name for a in rest)
            out.insert(0, f"{indent}from {node.module} import {names}")
        if said:  # the first line's and the other names' comments
            out[0] += "  #" + " #".join(said.values())
        edits.append((node.lineno - 1, node.end_lineno or node.lineno, "\n".join(out) + "\n"))
    for start, end, new in sorted(edits, reverse=True):
        lines[start:end] = [new]
    return "".join(lines)


FROM_IN_TEXT = re.compile(  # at a line start, or after an escaped newline inside a string
    rf"(?:(?<=\\n)|(?<![\w.]))from ({PACKAGE}(?:\.\w+)*) "
    r"import (\w+(?: as \w+)?(?:,[ \t]*\w+(?: as \w+)?)*)(?![\w(,])"
)


def module_imports_in_text(text: str, renames: dict[str, str]) -> str:
    """What step 3's ``ast`` pass cannot see, once the names are new: ``from P import m`` in a string
    (a script a test runs, a docs example) where ``P.m`` was a module that moved."""

    def one(m: re.Match[str]) -> str:
        module, listed = m.groups()
        pairs = [(n.split(" as ")[0].strip(), n.split(" as ")[-1].strip()) for n in listed.split(",")]
        moved = [(name, alias) for name, alias in pairs if f"{module}.{name}" in renames]
        if not moved:
            return m.group(0)
        rest = [
            name if name == alias else f"{name} as {alias}"
            for name, alias in pairs
            if (name, alias) not in moved
        ]
        out = [f"from {module} import {', '.join(rest)}"] if rest else []
        for name, alias in moved:
            parent, _, leaf = renames[f"{module}.{name}"].rpartition(".")
            out.append(f"from {parent} import {leaf}" + ("" if leaf == alias else f" as {alias}"))
        line_start = text.rfind("\n", 0, m.start()) + 1
        indent = text[line_start : m.start()]
        whole_line = not indent.strip() and text[m.end() : m.end() + 1] in ("\n", "")
        return ("\n" + indent if whole_line else "; ").join(out)

    return FROM_IN_TEXT.sub(one, text)


FROM_AGAIN = re.compile(rf"^(\s*)import ({PACKAGE}(?:\.\w+)*)\.(\w+) as (\w+)[ \t]*(#.*)?$", re.M)


def from_imports_again(text: str) -> str:
    def back(m: re.Match[str]) -> str:
        indent, parent, leaf, alias, comment = m.groups()
        name = leaf if leaf == alias else f"{leaf} as {alias}"
        return f"{indent}from {parent} import {name}" + (f"  {comment}" if comment else "")

    return FROM_AGAIN.sub(back, text)


# --- 3. dotted names and paths ---------------------------------------------------------------------


def name_rewriter(renames: dict[str, str]) -> re.Pattern[str]:
    """Any of the old names as a whole dotted name; a group name in quotes is not one."""
    alternatives = "|".join(
        re.escape(old) + ("(?![\"'`\\]])" if old in GROUPS else "")
        for old in sorted(renames, key=len, reverse=True)
    )
    return re.compile(rf"(?<![\w.])({alternatives})(?![\w])")


def path_rules(moves: dict[str, str]) -> list[tuple[re.Pattern[str], str]]:
    rules = []
    for old, new in sorted(moves.items(), key=lambda kv: len(kv[0]), reverse=True):
        rules.append((re.compile(rf"(?<![\w.-]){PACKAGE}/{re.escape(old)}(?![\w])"), f"{PACKAGE}/{new}"))
        if "/" in old:  # core/plan.py, sources/kb.py: a bare path names the module too
            rules.append((re.compile(rf"(?<![\w./-]){re.escape(old)}(?![\w])"), new))
    return rules


BACKTICKED = re.compile(r"(`+)([\w./]+)\1")


def short_rules(moves: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Package-relative names (``core.plan``, ``mcp_server``) and file names (``server.py``) of the
    modules that move, as docstrings and docs write them between backticks."""
    names = {}
    for old, new in moves.items():
        short = dotted(old).removeprefix(f"{PACKAGE}.")
        if "." in short or "_" in short:  # ``providers`` or ``answer`` alone may mean something else
            names[short] = dotted(new).removeprefix(f"{PACKAGE}.")
    return names, dict(moves)


def backticked(text: str, names: dict[str, str], files: dict[str, str]) -> str:
    """Module names between backticks, with any attribute after them (``core.plan.parts``)."""

    def one(m: re.Match[str]) -> str:
        ticks, inner = m.groups()
        if inner in files:
            return f"{ticks}{files[inner]}{ticks}"
        parts = inner.split(".")
        for cut in range(len(parts), 0, -1):
            head = ".".join(parts[:cut])
            if head in names:
                return ticks + ".".join([names[head], *parts[cut:]]) + ticks
        return m.group(0)

    return BACKTICKED.sub(one, text)


def deeper(text: str) -> str:
    """``Path(__file__)`` arithmetic for a test one folder further down."""
    text = re.sub(
        r"Path\(__file__\)(\.resolve\(\))?\.parents\[(\d)\]",
        lambda m: f"Path(__file__){m.group(1) or ''}.parents[{int(m.group(2)) + 1}]",
        text,
    )
    return re.sub(r"Path\(__file__\)(\.resolve\(\))?\.parent\b", r"Path(__file__)\1.parent.parent", text)
