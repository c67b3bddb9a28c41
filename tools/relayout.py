"""Move sourcewise to folders by capability (DESIGN.md's layout), mechanically and idempotently.

Run it at the root of a clean checkout (``git status`` empty), then check and commit the move alone::

    python tools/relayout.py            # does the move; prints what it did and what it left
    python tools/relayout.py --dry-run  # only prints the plan

What it does, in order:

1. Plans the moves from the tables below: ``MODULES`` (exact paths under ``src/sourcewise``), then
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

PACKAGE = "sourcewise"

# old path under src/sourcewise -> new path. Exact entries win over FOLDERS and PREFIXES.
MODULES = {
    # web/: URL keys, tiers and rating, the provider chain, ranking, citations, robots.txt rules
    "api.py": "web/api.py",
    "engine.py": "web/engine.py",
    "pages.py": "web/pages.py",
    "core/urls.py": "web/urls.py",
    "core/urlparse.py": "web/urlparse.py",
    "core/weburls.py": "web/weburls.py",
    "core/suffixes.py": "web/suffixes.py",
    "core/tiers.py": "web/tiers.py",
    "core/tierrules.py": "web/tierrules.py",
    "core/rating.py": "web/rating.py",
    "core/projects.py": "web/projects.py",
    "core/rank.py": "web/rank.py",
    "core/cite.py": "web/cite.py",
    "core/robots.py": "web/robots.py",
    # text/: the one analyzer, extraction, chunking, passages, markup and control characters
    "core/analyze.py": "text/analyze.py",
    "core/chunk.py": "text/chunk.py",
    "core/passages.py": "text/passages.py",
    "core/markup.py": "text/markup.py",
    "core/sanitize.py": "text/sanitize.py",
    "core/text.py": "text/words.py",
    "core/extract.py": "text/extract.py",
    # planning/: route, classify, plan, dates, variants, broadening, refinement
    "routing.py": "planning/routing.py",
    "core/route.py": "planning/route.py",
    "core/classify.py": "planning/classify.py",
    "core/plan.py": "planning/planner.py",
    "core/dates.py": "planning/dates.py",
    "core/variants.py": "planning/variants.py",
    "core/widen.py": "planning/widen.py",
    "core/content.py": "planning/content.py",
    "core/negation.py": "planning/negation.py",
    "core/syntax.py": "planning/syntax.py",
    "core/keywords.py": "planning/keywords.py",
    "core/validate.py": "planning/validate.py",
    "core/refine.py": "planning/refine.py",
    "core/feedback.py": "planning/feedback.py",
    # answer/: merge, relevance, authority, ambiguity, the extractive and the model writers
    "answer.py": "answer/model.py",
    "judge.py": "answer/judge.py",
    "core/merge.py": "answer/merge.py",
    "core/relevance.py": "answer/relevance.py",
    "core/ambiguity.py": "answer/ambiguity.py",
    "core/extractive.py": "answer/extractive.py",
    "core/pick.py": "answer/pick.py",
    "core/asked.py": "answer/asked.py",
    "core/doctype.py": "answer/doctype.py",
    "core/fusion.py": "answer/fusion.py",
    # sources/: one package per family
    "sources_api.py": "sources/api.py",
    "core/filters.py": "sources/filters.py",
    "sources/kb.py": "sources/kb/source.py",
    "sources/code.py": "sources/code/source.py",
    "sources/codeindex.py": "sources/code/index.py",
    "sources/codewalk.py": "sources/code/walk.py",
    "core/outline.py": "sources/code/outline.py",
    "core/codefacts.py": "sources/code/facts.py",
    "core/locate.py": "sources/code/locate.py",
    "core/taskread.py": "sources/code/taskread.py",
    "sources/slack.py": "sources/messages/slack.py",
    "sources/_slack_export.py": "sources/messages/slack_export.py",
    "sources/mail.py": "sources/messages/mail.py",
    "sources/_mailbox.py": "sources/messages/mailbox.py",
    "sources/_messages.py": "sources/messages/exports.py",
    "sources/github.py": "sources/tracker/github.py",
    "core/issues.py": "sources/tracker/issues.py",
    "sources/mcp.py": "sources/mcp/source.py",
    "sources/_mcp_schema.py": "sources/mcp/schema.py",
    "core/mcpread.py": "sources/mcp/read.py",
    # doors/: the CLI, MCP, HTTP, the web page, their guards and renderers
    "cli.py": "doors/cli/main.py",
    "mcp_server.py": "doors/mcp.py",
    "mcp_text.py": "doors/mcp_text.py",
    "server.py": "doors/http.py",
    "service.py": "doors/service.py",
    "guards.py": "doors/guards.py",
    "doorsafe.py": "doors/safe.py",
    "doorerrors.py": "doors/errors.py",
    "webpage.py": "doors/page.py",
    "core/render.py": "doors/render.py",
    "core/present.py": "doors/present.py",
}
# Every file under the folder moves (files added later included).
FOLDERS = {"providers/": "web/providers/"}
# ``sources/kbstore.py`` -> ``sources/kb/store.py``; ``cli_web.py`` -> ``doors/cli/web.py``.
PREFIXES = {"sources/kb": "sources/kb/", "cli_": "doors/cli/"}
# Modules that stay where they are (leaves, owners, the loops, net/): not reported as unmapped.
STAY = {
    "__init__.py", "__main__.py", "_lazy.py", "_sync.py", "_version.py", "access.py", "ask.py",
    "config.py", "effort.py", "errors.py", "gather.py", "keys.py", "registry.py", "retrieve.py",
    "retrieve_code.py", "retrieve_loop.py", "session.py", "core/__init__.py", "sources/__init__.py",
    "sources/_files.py", "sources/_fts.py", "sources/base.py", "sources/readers.py", "sources/web.py",
    "sources/workers.py",
}  # fmt: skip
STAY_FOLDERS = ("models/", "net/")
# Entry-point group names look like module names but are the plug-in interface: never renamed.
GROUPS = ("sourcewise.providers", "sourcewise.sources")
# The folder a package is emptied from, removed when nothing else is left in it.
EMPTIED = ("core",)
NEW_PACKAGES = {
    "web": "The web: URL keys, source tiers and rating, the provider chain and its providers, ranking and\n"
    "citations (seeds 000-002).",
    "web/providers": "",  # moved with its own __init__.py
    "text": "Text: the one analyzer (English and Korean), extraction, chunking, passages, markup.",
    "planning": "Reading a question: route, classify, plan, dates, variants, broadening and refinement\n"
    "(seeds 001, 003, 004).",
    "answer": "Answering: cross-source merge, relevance and authority, ambiguity, the extractive and the\n"
    "model writers.",
    "doors": "The doors: the CLI, the MCP server, the HTTP API and web page, their guards and renderers.",
    "doors/cli": "The ``sourcewise`` command: one module per group of commands, ``main`` the entry point.",
    "sources/kb": "The knowledge base: files indexed on tantivy (or PostgreSQL) and searched.",
    "sources/code": "A code repository as a source, and reading a task against it.",
    "sources/messages": "Chat and mail exports as sources (Slack, mbox, Maildir).",
    "sources/tracker": "Issue trackers as sources (GitHub exports).",
    "sources/mcp": "Any MCP server's search tool as a source.",
}
# tests/test_x.py -> tests/AREA/test_x.py, mirroring src/. Tests that import another test file
# share its folder (pytest puts a test's own folder on sys.path).
AREAS = {
    "web": "cite ddgs gemini gemini_cli mcp_provider projects prose providers rank result_urls robots safety "
    "tiers tricky_tiers urls fast_paths engine budget",
    "net": "fetch fetch_robots guard deadline redis offline",
    "text": "analyze extract",
    "planning": "plan plan_components route route_signals conditional call_fast_paths validate",
    "answer": "merge_relevance extractive pick fusion doctype hostile_answer",
    "sources": "kb kb_mode kbembed kbpg kbscale kbvector source_code source_exports_stored source_github "
    "source_mail source_messages source_slack sources_base mcp_sources mcp_federation hostile_exports "
    "hostile_index hostile_kbfail hostile_unreadable readers locate",
    "doors": "cli cli_ask cli_config cli_gemini mcp server server_schema webpage doors_ask doors_effort "
    "doors_grounded doors_props doors_sources hostile_doors hostile_hang hostile_redis access workers team "
    "render_layouts behaviour terminal",
}
TESTS = {f"test_{name}.py": area for area, names in AREAS.items() for name in names.split()}
# Tests of the top level (the loops, the public surface, settings, the registry, the whole package).
TESTS_STAY = {
    f"test_{name}.py"
    for name in (
        "ask ask_plans ask_properties bad_input config docs_examples layers pgserver plugins properties "
        "public_api regex_time registry retrieve retrieve_input session_owner settings_cache startup"
    ).split()
}
TEXT_GLOBS = ("src/**/*.py", "tests/**/*.py", "benchmarks/**/*.py", "benchmarks/*.md", "docs/**/*.md")
TEXT_FILES = ("README.md", "pyproject.toml", ".ci/run")
SKIP_PARTS = {"data", "fixtures", "__pycache__"}  # recorded inputs are never rewritten


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


def dotted(rel: str) -> str:
    parts = rel.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([PACKAGE, *parts])


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


def deeper(text: str) -> str:
    """``Path(__file__)`` arithmetic for a test one folder further down."""
    text = re.sub(
        r"Path\(__file__\)(\.resolve\(\))?\.parents\[(\d)\]",
        lambda m: f"Path(__file__){m.group(1) or ''}.parents[{int(m.group(2)) + 1}]",
        text,
    )
    return re.sub(r"Path\(__file__\)(\.resolve\(\))?\.parent\b", r"Path(__file__)\1.parent.parent", text)


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


def stale(root: Path, moves: dict[str, str]) -> None:
    """Prose that names a moved module by its bare file name (``mcp_server.py``) or the old ``core/``
    folder: left for a person, since a bare name may mean something else."""
    bare = sorted({old for old in moves if "/" not in old}, key=len, reverse=True)
    if not bare:
        return
    pattern = re.compile(r"(?<![\w/.])(" + "|".join(map(re.escape, bare)) + r"|core/)(?![\w])")
    hits = []
    for path in sorted([root / "README.md", *root.glob("docs/**/*.md"), *root.glob("benchmarks/*.md")]):
        for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
            if pattern.search(line):
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
