"""The import graph of ``src/`` as drawn in DESIGN.md, read with ``ast`` (nothing is imported).

An edge is any import of a package module: at the top, inside a function or class (it still runs),
a literal ``lazy_module("sourcewise.X")`` or ``importlib.import_module("sourcewise.X")``; only
imports under ``if TYPE_CHECKING:`` are left out (they never run). ``from P import name`` is an
edge to ``P.name`` when that is a module, else to ``P``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "sourcewise"

# Leaves: they import nothing of the package.
LEAVES = ("sourcewise.models", "sourcewise.errors")

# The modules that do no I/O: they take today, tables and settings as arguments. They import only
# the leaves and each other (so no net/, provider, source, door or owner), never the clock, the
# environment or a file.
PURE = (
    "sourcewise.answer.ambiguity",
    "sourcewise.text.analyze",
    "sourcewise.answer.asked",
    "sourcewise.text.chunk",
    "sourcewise.planning.classify",
    "sourcewise.web.cite",
    "sourcewise.sources.code.facts",
    "sourcewise.planning.content",
    "sourcewise.planning.dates",
    "sourcewise.answer.doctype",
    "sourcewise.text.extract",
    "sourcewise.answer.extractive",
    "sourcewise.planning.feedback",
    "sourcewise.sources.filters",
    "sourcewise.answer.fusion",
    "sourcewise.sources.tracker.issues",
    "sourcewise.sources.mcp.read",
    "sourcewise.planning.keywords",
    "sourcewise.text.korean",
    "sourcewise.sources.code.locate",
    "sourcewise.text.markup",
    "sourcewise.answer.merge",
    "sourcewise.planning.negation",
    "sourcewise.planning.planner",
    "sourcewise.sources.code.outline",
    "sourcewise.text.passages",
    "sourcewise.answer.pick",
    "sourcewise.answer.candidates",
    "sourcewise.doors.present",
    "sourcewise.web.projects",
    "sourcewise.web.rank",
    "sourcewise.web.rating",
    "sourcewise.web.prose",
    "sourcewise.planning.refine",
    "sourcewise.answer.relevance",
    "sourcewise.doors.formats",
    "sourcewise.doors.render",
    "sourcewise.web.robots",
    "sourcewise.planning.route",
    "sourcewise.text.sanitize",
    "sourcewise.web.suffixes",
    "sourcewise.web.tierrules",
    "sourcewise.web.tiers",
    "sourcewise.planning.syntax",
    "sourcewise.sources.code.taskread",
    "sourcewise.text.words",
    "sourcewise.web.urlparse",
    "sourcewise.web.urls",
    "sourcewise.planning.validate",
    "sourcewise.planning.variants",
    "sourcewise.planning.widen",
    "sourcewise.web.weburls",
)

# Standard-library and third-party modules that reach the clock, the environment, files or the
# network; a pure module imports none of them.
IMPURE_MODULES = frozenset(
    {
        "os",
        "time",
        "socket",
        "subprocess",
        "sqlite3",
        "shutil",
        "tempfile",
        "importlib.resources",
        "httpx",
        "urllib.request",
        "logging",
        "glob",
    }
)
# Calls that read the clock or a file whatever they were imported as.
IMPURE_CALLS = frozenset(
    {
        "today",
        "now",
        "utcnow",
        "open",
        "read_text",
        "read_bytes",
        "write_text",
        "write_bytes",
        "getenv",
        "input",
    }
)
IMPURE_NAMES = frozenset({"Path", "environ"})  # pathlib.Path touches files; PurePosixPath does not


def _name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, Path]:
    found = {_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}
    assert len(found) > 50, "the package's modules were found"
    return found


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node below ``node`` except what an ``if TYPE_CHECKING:`` guards (its ``else`` runs)."""
    for child in ast.iter_child_nodes(node):
        yield child
        if isinstance(child, ast.If) and _type_checking(child.test):
            for stmt in child.orelse:
                yield stmt
                yield from _walk(stmt)
        else:
            yield from _walk(child)


def _imported(module: str, path: Path, tree: ast.AST) -> Iterator[str]:
    """Every dotted name ``module`` imports at run time (package or not)."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in _walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            yield target
            yield from (f"{target}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(func := node.func, ast.Name | ast.Attribute)
            and (func.id if isinstance(func, ast.Name) else func.attr) in ("lazy_module", "import_module")
            and node.args
            and isinstance(arg := node.args[0], ast.Constant)
            and isinstance(arg.value, str)
            and not arg.value.startswith(".")
        ):
            yield arg.value


@cache
def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        names = set(_imported(name, path, ast.parse(path.read_text("utf-8"))))
        graph[name] = {n for n in names if n in modules and n != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


def _short(name: str) -> str:
    return name.removeprefix(f"{PACKAGE}.")


def test_the_cycle_finder_finds_a_cycle_and_passes_a_chain() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_imports_in_functions_count_and_type_checking_ones_do_not() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .a import A\nelse:\n    b = lazy_module('sourcewise.b')\n"
        "def f():\n    from ..c import d\n"
    )
    found = set(_imported("sourcewise.x.y", Path("y.py"), tree))
    assert "sourcewise.x.a" not in found
    assert {"sourcewise.b", "sourcewise.c", "sourcewise.c.d"} <= found


def test_the_import_graph_has_no_cycles() -> None:
    cycles = [[_short(m) for m in c] for c in _cycles(_graph())]
    assert cycles == [], f"import cycles: {cycles}"


def _leaf_of(module: str) -> str | None:
    """The leaf ``module`` belongs to (a leaf may be a package of leaf modules), or ``None``."""
    return next((leaf for leaf in LEAVES if module == leaf or module.startswith(f"{leaf}.")), None)


@pytest.mark.parametrize("leaf", LEAVES)
def test_models_and_errors_import_nothing_of_the_package(leaf: str) -> None:
    graph = _graph()
    members = [m for m in graph if _leaf_of(m) == leaf]
    assert members, f"{leaf} was found"
    outside = {f"{_short(m)} -> {_short(n)}" for m in members for n in graph[m] if _leaf_of(n) != leaf}
    assert not outside, f"{leaf} imports {sorted(outside)}"


def test_the_pure_modules_exist() -> None:
    modules = _modules()
    missing = [m for m in PURE if m not in modules]
    assert not missing, f"listed as pure but not found (moved? update PURE): {missing}"


@pytest.mark.parametrize("module", PURE)
def test_a_pure_module_imports_only_leaves_and_pure_modules(module: str) -> None:
    graph, modules = _graph(), _modules()
    # a package's __init__ that imports nothing (``core``, a folder of the layout) is no dependency
    empty = {m for m, path in modules.items() if path.name == "__init__.py" and not graph[m]}
    allowed = set(PURE) | empty
    imports = {m for m in graph[module] if _leaf_of(m) is None}
    assert imports <= allowed, f"{module} imports {sorted(map(_short, imports - allowed))}"


@pytest.mark.parametrize("module", PURE)
def test_a_pure_module_reads_no_clock_environment_or_file(module: str) -> None:
    path = _modules()[module]
    tree = ast.parse(path.read_text("utf-8"))
    found = set()
    for name in _imported(module, path, tree):
        if name in IMPURE_MODULES or name.split(".")[0] in IMPURE_MODULES:
            found.add(f"import {name}")
    for node in _walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if called in IMPURE_CALLS:
                found.add(f"{called}()")
        if isinstance(node, ast.Name | ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name in IMPURE_NAMES:
                found.add(name)
    assert not found, f"{module} reaches outside: {sorted(found)}"


def test_the_impure_checks_see_the_clock_and_files() -> None:
    tree = ast.parse("import os\nfrom datetime import date\nx = date.today()\ny = Path('a').read_text()\n")
    calls = {
        n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
    }
    assert {"today", "read_text"} <= calls & IMPURE_CALLS
    assert "os" in set(_imported("sourcewise.core.z", Path("z.py"), tree)) & IMPURE_MODULES


MODULE_LINES = 400
FUNCTION_LINES = 60
WHOLE = "reads better whole"  # a module whose docstring says so (a table, a parser) may be longer


def _sizes() -> tuple[list[str], list[str]]:
    """Modules over ``MODULE_LINES`` and functions over ``FUNCTION_LINES`` (signature included)."""
    modules, functions = [], []
    for name, path in _modules().items():
        text = path.read_text("utf-8")
        tree = ast.parse(text)
        if WHOLE in (ast.get_docstring(tree) or ""):
            continue
        if (lines := len(text.splitlines())) > MODULE_LINES:
            modules.append(f"{_short(name)} ({lines})")
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > FUNCTION_LINES:
                    functions.append(f"{_short(name)}.{node.name} ({length})")
    return modules, functions


def test_no_module_over_400_lines_and_no_function_over_60() -> None:
    modules, functions = _sizes()
    assert not modules, f"modules over {MODULE_LINES} lines: {modules}"
    assert not functions, f"functions over {FUNCTION_LINES} lines: {functions}"


def test_the_layout_in_docs_names_every_module_and_no_other() -> None:
    """docs/architecture.md draws the tree for a new contributor: a moved or new module must show
    there (the loops' move left it naming ``ask.py`` beside ``models/``)."""
    text = (SRC.parent / "docs" / "architecture.md").read_text("utf-8")
    block = text[text.index("src/sourcewise/\n") : text.index("```", text.index("src/sourcewise/\n"))]
    drawn: set[str] = set()
    folders: list[str] = []
    for line in block.splitlines()[1:]:
        depth = (len(line) - len(line.lstrip(" "))) // 2
        name = line.split()[0]
        folders[depth - 1 :] = [name.rstrip("/")] if name.endswith("/") else []
        drawn.add("/".join([*folders[: depth - 1], name.rstrip("/")]))
    package = SRC / PACKAGE
    real = {
        str(p.relative_to(package).with_suffix("") if p.suffix == ".py" else p.relative_to(package))
        for p in package.rglob("*")
        if (p.suffix == ".py" and not (p.name == "__init__.py" and p.parent != package))
        or (p.is_dir() and (p / "__init__.py").exists())
    }
    drawn = {d.removesuffix(".py") for d in drawn}
    assert drawn == real, (sorted(real - drawn), sorted(drawn - real))
