"""Move sourcewise to folders by capability (DESIGN.md's layout), mechanically and idempotently.

Run it at the root of a clean checkout (``git status`` empty), then check and commit the move alone::

    python tools/relayout.py            # does the move; prints what it did and what it left
    python tools/relayout.py --dry-run  # only prints the plan

What it does, in order:

1. Plans the moves from the tables (``relayout_table.py``): ``MODULES`` (paths under ``src/sourcewise``), then
   ``FOLDERS`` (every file under a folder), then ``PREFIXES`` (``sources/kbX.py`` -> ``sources/kb/X.py``).
   A module no rule names stays where it is and is printed (a file another branch added, say); its
   imports are still rewritten, so it keeps working where it is.
2. Rewrites every relative import under ``src/`` to an absolute ``sourcewise.`` import (resolved
   from the file's place before the move), and the lazy table of ``sourcewise/__init__.py``.
3. Rewrites ``from P import m`` where ``P.m`` is a module that moves, then every dotted name
   ``sourcewise.OLD`` (code, strings such as monkeypatch targets and ``lazy_module`` names, entry
   points in pyproject.toml, docs) and every path ``sourcewise/OLD.py`` or ``core/x.py`` in src/,
   tests/, benchmarks/, docs/, README.md, pyproject.toml and .ci/.
4. ``git mv``s each module, writes an ``__init__.py`` with a docstring for each new package, and
   removes ``core/`` once nothing is left in it.
5. Moves the tests to mirror ``src/`` (``TESTS``), fixing their ``Path(__file__)`` arithmetic and
   every ``tests/test_x.py`` mention; a test no rule names stays in ``tests/`` and is printed.
6. Sorts the imports and formats the changed Python files with ruff (when ruff is installed).

A second run finds nothing to move and changes nothing. After it: reinstall (``pip install -e .``:
the console script and the plug-in entry points live in the installed metadata), then ``ruff check
src tests benchmarks``, ``mypy``, ``python -c 'import sourcewise'``, ``sourcewise --help`` and the
tests. The package that holds route/plan is ``planning/``, not ``plan/``: ``sourcewise.plan`` is
a public function, and a subpackage of that name would replace it on the package once imported.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

from relayout_table import (  # beside this script: python puts its folder first on sys.path
    EMPTIED,
    FOLDERS,
    MODULES,
    NEW_PACKAGES,
    PACKAGE,
    PREFIXES,
    SKIP_PARTS,
    STAY,
    STAY_FOLDERS,
    TESTS,
    TESTS_STAY,
    TEXT_FILES,
    TEXT_GLOBS,
)
from relayout_text import (
    absolute_imports,
    backticked,
    deeper,
    dotted,
    from_imports_again,
    module_imports_in_text,
    name_rewriter,
    path_rules,
    short_rules,
    split_module_imports,
)


def target(rel: str) -> str | None:
    """The new path of ``rel`` (under src/sourcewise), or ``None`` when it stays."""
    if rel in MODULES:
        return MODULES[rel]
    for old, new in FOLDERS.items():
        if rel.startswith(old):
            return new + rel[len(old) :]
    for old, new in PREFIXES.items():
        folder, _, name = rel.rpartition("/")
        stem = f"{folder}/{name}" if folder else name
        if stem.startswith(old) and "/" not in stem[len(old) :] and len(stem) > len(old) + 3:
            return new + stem[len(old) :]
    return None


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def plan_moves(src: Path) -> tuple[dict[str, str], list[str]]:
    moves: dict[str, str] = {}
    unmapped: list[str] = []
    for path in sorted(src.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(src).as_posix()
        new = target(rel)
        if new is not None and new != rel:
            if (src / new).exists():
                sys.exit(f"refusing: {new} exists already (from {rel})")
            moves[rel] = new
        elif new is None and rel not in STAY and not rel.startswith(STAY_FOLDERS + new_folders()):
            unmapped.append(rel)
    return moves, unmapped


def new_folders() -> tuple[str, ...]:
    """The folders of the new layout: what is already in one of them has moved (a second run)."""
    folders = {new.rpartition("/")[0] + "/" for new in MODULES.values() if "/" in new}
    return tuple(sorted(folders | set(FOLDERS.values()) | set(PREFIXES.values())))


# --- 2. relative imports -> absolute ---------------------------------------------------------------


def text_files(root: Path) -> list[Path]:
    tracked = set(git("ls-files").split("\n"))
    found: set[Path] = set()
    for pattern in TEXT_GLOBS:
        found.update(root.glob(pattern))
    found.update(root / f for f in TEXT_FILES if (root / f).exists())
    return sorted(
        p
        for p in found
        if p.relative_to(root).as_posix() in tracked and not SKIP_PARTS & set(p.relative_to(root).parts[:-1])
    )


# --- 5. tests ------------------------------------------------------------------------------------


def plan_tests(tests: Path) -> tuple[dict[str, str], list[str]]:
    moves, unmapped = {}, []
    for path in sorted(tests.glob("test_*.py")):
        area = TESTS.get(path.name)
        if area is None and path.name not in TESTS_STAY:
            unmapped.append(path.name)
        if area is None:
            continue
        moves[path.name] = f"{area}/{path.name}"
    return moves, unmapped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    parser.add_argument("--dirty", action="store_true", help="run even with uncommitted changes")
    args = parser.parse_args()
    root = Path.cwd()
    src = root / "src" / PACKAGE
    if not (root / "pyproject.toml").is_file() or not src.is_dir():
        sys.exit("run this at the root of a sourcewise checkout")
    if not args.dry_run and not args.dirty and git("status", "--porcelain", "--untracked-files=no").strip():
        sys.exit("uncommitted changes: commit them first (or --dirty), so that the move is a commit alone")
    moves, unmapped = plan_moves(src)
    test_moves, tests_unmapped = plan_tests(root / "tests")
    for old, new in moves.items():
        print(f"move src/{PACKAGE}/{old} -> {new}")
    for old, new in test_moves.items():
        print(f"move tests/{old} -> tests/{new}")
    if args.dry_run:
        report(unmapped, tests_unmapped)
        return
    renames = {dotted(old): dotted(new) for old, new in moves.items()}
    if clash := set(renames) & set(renames.values()):  # a new name must never read as an old one
        sys.exit(f"a new module name is an old one: {sorted(clash)}")
    old_modules = {dotted(p.relative_to(src).as_posix()) for p in src.rglob("*.py")}
    names = name_rewriter(renames) if renames else None
    paths = path_rules(moves)
    short_names, short_files = short_rules(moves)
    test_names = re.compile(r"(?<![\w/])tests/(test_\w+\.py)\b")
    changed: dict[Path, str] = {}  # written only once every file is rewritten: a refusal changes nothing
    for path in text_files(root):
        text = original = path.read_text("utf-8")
        if path.suffix == ".py" and path.is_relative_to(src):
            rel = path.relative_to(src).as_posix()
            text = absolute_imports(text, dotted(rel), path.name == "__init__.py")
        if path.suffix == ".py":
            text = split_module_imports(text, {m for m in old_modules if m in renames})
        if names is not None:
            text = names.sub(lambda m: renames[m.group(1)], text)
            text = module_imports_in_text(text, renames)
        for pattern, new in paths:
            text = pattern.sub(new, text)
        text = backticked(text, short_names, short_files)
        text = test_names.sub(lambda m: f"tests/{test_moves.get(m.group(1), m.group(1))}", text)
        if path.suffix == ".py":
            text = from_imports_again(text)
        if text != original:
            changed[path] = text
    for path, text in changed.items():
        path.write_text(text, "utf-8")
    move_modules(root, src, moves)
    move_tests(root, test_moves)
    tidy(root, list(changed), moves, test_moves)
    write_layout(root)
    report(unmapped, tests_unmapped)
    stale(root, moves)
    print(f"\n{len(moves)} modules and {len(test_moves)} test files moved; {len(changed)} files rewritten.")


def move_modules(root: Path, src: Path, moves: dict[str, str]) -> None:
    for old, new in moves.items():
        (src / new).parent.mkdir(parents=True, exist_ok=True)
        git("mv", str(src / old), str(src / new))
    for package, doc in NEW_PACKAGES.items():
        init = src / package / "__init__.py"
        if (src / package).is_dir() and not init.exists():
            init.write_text(f'"""{doc}"""\n' if doc else "", "utf-8")
            git("add", str(init))
    for folder in EMPTIED:
        rest = [p for p in (src / folder).rglob("*.py") if p.name != "__init__.py"]
        if (src / folder).is_dir() and not rest:
            if (src / folder / "__init__.py").exists():
                git("rm", "-q", str(src / folder / "__init__.py"))
            shutil.rmtree(src / folder, ignore_errors=True)
    for cache in src.rglob("__pycache__"):  # stale bytecode of moved modules
        shutil.rmtree(cache, ignore_errors=True)
    for empty in sorted((p for p in src.rglob("*") if p.is_dir()), reverse=True):
        if not any(empty.iterdir()):  # a folder every module left (providers/)
            empty.rmdir()


def move_tests(root: Path, test_moves: dict[str, str]) -> None:
    for old, new in test_moves.items():
        source, dest = root / "tests" / old, root / "tests" / new
        dest.parent.mkdir(parents=True, exist_ok=True)
        git("mv", str(source), str(dest))
        text = dest.read_text("utf-8")
        if (fixed := deeper(text)) != text:
            dest.write_text(fixed, "utf-8")


def tidy(root: Path, changed: list[Path], moves: dict[str, str], test_moves: dict[str, str]) -> None:
    """Imports sorted and long lines wrapped, in the files this run touched."""
    src = root / "src" / PACKAGE
    touched = {p for p in changed if p.exists()}
    touched |= {src / new for new in moves.values()}
    touched |= {root / "tests" / new for new in test_moves.values()}
    python = sorted(str(p) for p in touched if p.suffix == ".py" and p.exists())
    if not python:
        return
    if shutil.which("ruff") is None:
        print("ruff is not installed: run `ruff check --fix --select I` and `ruff format` on the moved files")
        return
    subprocess.run(["ruff", "check", "--fix", "--select", "I", "--quiet", *python], check=False)
    subprocess.run(["ruff", "format", "--quiet", *python], check=False)


LAYOUT = re.compile(r"(## Layout\n\n```\n)(.*?)(```\n)", re.S)


def first_line(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text("utf-8"))) or ""
    return doc.split("\n")[0].strip()


def is_module(path: Path) -> bool:
    return path.suffix == ".py" or (path / "__init__.py").exists()


def layout(src: Path) -> str:
    """The package's rooms as they are on disk, each with the first line of its docstring."""
    out = [f"src/{PACKAGE}/"]

    def room(path: Path, depth: int) -> None:
        name = path.name + ("/" if path.is_dir() else "")
        doc = first_line(path / "__init__.py" if path.is_dir() else path)
        line = f"{'  ' * depth}{name:<{20 - 2 * depth}} {doc}".rstrip()
        out.append(line if len(line) <= 110 else line[:109] + "…")
        if path.is_dir():
            for child in sorted(path.iterdir()):
                if child.name != "__init__.py" and is_module(child):
                    room(child, depth + 1)

    for child in sorted(src.iterdir()):
        if is_module(child):
            room(child, 1)
    return "\n".join(out) + "\n"


def write_layout(root: Path) -> None:
    """docs/architecture.md's layout drawn again from the tree (a second run draws the same)."""
    doc = root / "docs" / "architecture.md"
    if doc.is_file() and LAYOUT.search(text := doc.read_text("utf-8")):
        drawn = layout(root / "src" / PACKAGE)
        doc.write_text(LAYOUT.sub(lambda m: m.group(1) + drawn + m.group(3), text), "utf-8")


def stale(root: Path, moves: dict[str, str]) -> None:
    """Prose that names a moved module by its bare file name (``mcp_server.py``) or the old ``core/``
    folder: left for a person, since a bare name may mean something else."""
    bare = sorted({old for old in moves if "/" not in old}, key=len, reverse=True)
    if not bare:
        return
    pattern = re.compile(r"(?<![\w/.])(" + "|".join(map(re.escape, bare)) + r"|core/)(?![\w])")
    hits = []
    for path in sorted([root / "README.md", *root.glob("docs/**/*.md"), *root.glob("benchmarks/*.md")]):
        text = path.read_text("utf-8")
        drawn = range(0)  # the layout this script draws is right by construction
        if block := LAYOUT.search(text):
            drawn = range(text.count("\n", 0, block.start()) + 1, text.count("\n", 0, block.end()) + 1)
        for number, line in enumerate(text.splitlines(), start=1):
            if number not in drawn and pattern.search(line):
                hits.append(f"  {path.relative_to(root)}:{number}: {line.strip()[:100]}")
    if hits:
        print("\nprose that may name an old place (check by hand):")
        print("\n".join(hits))


def report(unmapped: list[str], tests_unmapped: list[str]) -> None:
    if unmapped:
        print("\nleft in place (no rule names them; add them to MODULES to move them):")
        for rel in unmapped:
            print(f"  src/{PACKAGE}/{rel}")
    if tests_unmapped:
        print("\ntests left in tests/ (add them to AREAS to move them):")
        for name in tests_unmapped:
            print(f"  tests/{name}")


if __name__ == "__main__":
    main()
