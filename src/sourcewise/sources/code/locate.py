"""Which files (and definitions in them) a task is about: two stages over a repository's structure.

Stage one ranks files by what the task names exactly (``sources/code/taskread.py``) and by its words:

- **words**: BM25 over whole files (path and body), normalised by the best file's;
- **paths and modules**: a file path the task names (a traceback frame's file, matched by its last
  parts) or a dotted module (``flask.cli`` -> ``src/flask/cli.py``; ``import ssl`` -> a module
  ``ssl``, never a doc page or a package's ``__init__``); a package it names lifts its own modules a
  little (``sphinx.ext.autosummary`` -> its ``generate.py``: the bug is in one of them); a name that
  spells a module (``autodoc_typehints`` -> ``autodoc/typehints.py``, ``xr.concat``, ``--line-ranges``);
- **frames, errors and methods**: a traceback frame's function (a frame in the repository's own
  code: another package's ``click/core.py`` only ran it), an error class the task quotes or a
  qualified ``Class.method`` it names, defined in a file (its outline's symbols), counts for it,
  more when few files define it (a bare name in the prose is left out: it points at every file
  defining ``route``);
- **names quoted**: a distinctive name the task quotes (a config key ``autodoc_preserve_defaults``,
  held by a string, not a definition) counts for the one source file holding it word for word;
- **tests named**: a test file the task names (or the test file defining a test function it names)
  points at the module it tests (``tests/test_termui.py`` -> ``termui.py``);
- **kinds of files**: when the task asks for a code change, source files outrank tests, docs,
  changelogs, vendored code (a ``vendor`` folder, or a release copied in: ``jquery-3.6.0.js``),
  examples and config (kept, weighted down), unless it is about them: names such a file of the
  repository (a reporter's own ``test_demo.py`` is not one).

Measured and left out (``benchmarks/RESULTS.md``, retrieve): names in the prose (an example's
``app.route`` points at every file that defines ``route``) and a personalised PageRank over the
import graph (it lifts hub modules such as ``app.py`` and ``__init__.py``) both lowered Acc@1; so
did a quoted name held by two or three source files, and an error message's fixed parts (the
interpreter's own ``object has no attribute`` is held by a file that is not the bug's). Translations
(``LC_MESSAGES/*.js``) as docs moved no task across 1, 5 or 10.

Stage two picks, in each file, the definitions the task names, else those whose names share most
words with it: a hit says ``path::Class.method`` with its lines. Pure: the caller reads the index.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sourcewise.sources.code.facts import kind_of, path_parts, resolves_to, spelled_by
from sourcewise.sources.code.outline import Symbol
from sourcewise.sources.code.taskread import Reading
from sourcewise.text.analyze import analyze

__all__ = ["FileFacts", "Located", "Repo", "kind_of", "rank", "verbatim_strings"]

W_LEXICAL = 1.0
W_FRAME = 1.5
W_PATH = 2.0
W_MODULE = 1.5
W_INNERMOST = 1.0  # the innermost traceback frame inside the repository: where it failed
W_ERROR = 0.5  # the file defining a quoted error class (it is raised elsewhere, as often as not)
W_IMPORTER = 0.75  # a file importing a module the prose names that the repository does not hold
W_METHOD = 1.0  # the file defining a ``Class.method`` the task names (specific, unlike a bare name)
W_TESTED = 2.0  # the module a named test file tests: a failing test points at it
W_SPELLED = (0.35, 1.0)  # a module a compound name spells (``xr.concat`` -> ``concat.py``); its folder too
MAX_IMPORTERS = 10
W_PACKAGE = 0.5  # a module of a package the task names (``sphinx.ext.autosummary`` -> its ``generate.py``)
MAX_PACKAGE = 12
W_VERBATIM = 1.0  # the one source file holding a distinctive name the task quotes
MAX_HOLDERS = 1  # measured: a name two or three files hold lowered Acc@1 (flask, requests)

NAME_CAP = 3.0
OTHER_KIND = 0.35  # tests, docs, changelogs, examples, config when the task is not about them
MAX_DEFINITIONS = 3
WITH_DEFINITIONS = 30  # the best files whose definitions are picked (stage two): those shown


@dataclass(frozen=True)
class FileFacts:
    """What the index knows of one file's structure."""

    path: str
    defines: tuple[str, ...] = ()
    imports: tuple[str, ...] = ()
    symbols: tuple[Symbol, ...] = ()


class Repo:
    """A repository's structure, built once per state of its index: files, kinds, definers."""

    def __init__(self, files: Sequence[FileFacts]) -> None:
        self.files = {f.path: f for f in files}
        self.paths = list(self.files)
        self.kinds = {p: kind_of(p) for p in self.paths}
        self.code = [p for p in self.paths if self.kinds[p] == "source"]
        self.definers = _definers(files)
        self.named: dict[str, list[str]] = defaultdict(list)  # a module's last part -> source files so named
        for p in self.code:
            self.named[path_parts(p)[-1] if path_parts(p) else p].append(p)
        # a folder's name -> the folder it sits in ("" at the top, or under src/ or lib/)
        self.folders: dict[str, set[str]] = defaultdict(set)
        for p in self.paths:
            parts = p.split("/")[:-1]
            for i, part in enumerate(parts):
                self.folders[part].add("" if i == 0 or parts[:i] in (["src"], ["lib"]) else parts[i - 1])
        self.importers: dict[str, set[str]] = defaultdict(set)  # module -> files that import it
        for f in files:
            for module in f.imports:
                self.importers[module].add(f.path)


@dataclass(frozen=True)
class Located:
    """A ranked file: its score, why, and the definitions in it the task is most about."""

    path: str
    score: float
    reasons: tuple[str, ...]
    definitions: tuple[Symbol, ...] = ()


def _last(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _definers(files: Sequence[FileFacts]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for f in files:
        for s in f.symbols:
            out[_last(s.name)].add(f.path)
            out[s.name].add(f.path)
        for d in f.defines:
            out[_last(d)].add(f.path)
    return out


def _path_hits(reading: Reading, paths: Sequence[str]) -> dict[str, str]:
    """Files a named path points at: its last two parts match (one part if that name is unique)."""
    out: dict[str, str] = {}
    by_name: dict[str, list[str]] = defaultdict(list)
    for p in paths:
        by_name[p.rsplit("/", 1)[-1]].append(p)
    for named in reading.paths:
        parts = [p for p in named.split("/") if p and p != "."]
        if not parts:
            continue
        same = by_name.get(parts[-1], [])
        tail = "/".join(parts[-2:])
        hit = [p for p in same if len(parts) >= 2 and ("/" + p).endswith("/" + tail)]
        if not hit and len(same) == 1 and parts[-1] != "__init__.py":
            hit = same
        for p in hit:
            out.setdefault(p, named)
    return out


def _module_hits(reading: Reading, repo: Repo) -> dict[str, str]:
    """Files a dotted name points at: its longest prefix that names a module of the repository."""
    out: dict[str, str] = {}
    for module in reading.modules:
        parts = module.split(".")
        for n in range(len(parts), 0, -1):
            if n == 1 and len(parts) > 1:
                break  # ``httpx.NetRCAuth`` names a symbol of httpx, not the package file
            found = resolves_to(".".join(parts[:n]), repo.named.get(parts[n - 1], ()))
            if n == 1:  # ``import ssl``: a top-level module file, never a package's ``__init__``
                found = [p for p in found if _top_level(p) == parts[:1] and "__init__" not in p]
            if found and len(found) <= 3:
                for p in found:
                    out.setdefault(p, module)
                break
    return out


def _top_level(path: str) -> list[str]:
    """The module parts a file is imported by from the repository's root or its ``src``/``lib``
    folder: ``import logging`` in a pasted script is the standard library's, never the
    ``src/_pytest/logging.py`` that only ``_pytest.logging`` names."""
    parts = path_parts(path)
    return parts[1:] if parts[:1] in (["src"], ["lib"]) else parts


def _held(about: frozenset[str], reading: Reading, repo: Repo, hits: Mapping[str, str]) -> frozenset[str]:
    """The kinds a task is about that the repository holds: a kind of file the task names counts
    when a named path is such a file of the repository, or (tests) a named test function is
    defined in one. A report's own ``test_demo.py`` or ``docs/x.md`` is the reporter's file."""
    held = {repo.kinds.get(p) for p in hits}
    if any(repo.kinds.get(p) == "test" for name in reading.tests for p in repo.definers.get(name, ())):
        held.add("test")
    return frozenset(k for k in about if k in held)


def _tested(reading: Reading, repo: Repo, hits: Mapping[str, str]) -> dict[str, str]:
    """Source files a named test points at: ``tests/test_termui.py`` (or a test function the task
    names, by the test file defining it) -> the module ``termui.py`` / ``_termui.py``; a test named
    by its area and module (``test_build_latex.py``, ``test_ext_autodoc.py``) -> ``latex.py``, the
    package ``autodoc/``."""
    tests = [p for p in hits if repo.kinds.get(p) == "test"]
    for name in reading.tests:
        where = [p for p in repo.definers.get(name, set()) if repo.kinds.get(p) == "test"]
        tests += where if len(where) <= 2 else []
    by_stem: dict[str, list[str]] = defaultdict(list)
    for p in repo.code:
        parts = p.rsplit(".", 1)[0].split("/")
        by_stem[(parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]).lstrip("_")].append(
            p
        )
    out: dict[str, str] = {}
    for test in dict.fromkeys(tests):
        stem = test.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        parts = stem.removeprefix("test_").removesuffix("_test").split("_")
        for found in (by_stem.get(name, []) for name in _stems(parts)):
            if 0 < len(found) <= 3:
                for p in found:
                    out.setdefault(p, test)
                break
    return out


def _stems(parts: list[str]) -> list[str]:
    """The module names a test's name may hold, longest first, a suffix before a prefix of the same
    length: ``termui_prompt`` -> ``termui_prompt``, ``prompt``, ``termui``."""
    out = []
    for n in range(len(parts), 0, -1):
        out += ["_".join(parts[len(parts) - n :]), "_".join(parts[:n])]
    return list(dict.fromkeys(out))


def _definitions(f: FileFacts, names: set[str], words: set[str]) -> tuple[Symbol, ...]:
    def score(s: Symbol) -> tuple[float, int]:
        exact = 2.0 if (_last(s.name) in names or s.name in names) else 0.0
        shared = len(set(analyze(s.name, stem=True)) & words)
        return exact + shared, -s.start

    ranked = sorted(((score(s), s) for s in f.symbols), key=lambda x: x[0], reverse=True)
    return tuple(s for value, s in ranked if value[0] > 0)[:MAX_DEFINITIONS]


def verbatim_strings(reading: Reading) -> list[str]:
    """What a task quotes that a file may hold word for word: its distinctive names (a config key
    ``autodoc_preserve_defaults``, ``SESSION_COOKIE_HTTPONLY``, a ``CamelCase`` class), a traceback's
    frames aside. An error message's fixed parts were measured and left out: the interpreter's own
    (``object has no attribute``) pointed at the wrong file."""
    return [n for n in reading.names if n not in reading.frames and _distinctive(n)]


def _distinctive(name: str) -> bool:
    bare = name.strip("_")
    return len(bare) >= 6 and ("_" in bare or any(c.isupper() for c in bare[1:]))


def rank(
    reading: Reading,
    repo: Repo,
    lexical: Mapping[str, float],
    *,
    about: frozenset[str] = frozenset(),
    extra_names: Sequence[str] = (),
    verbatim: Mapping[str, set[str]] | None = None,
) -> list[Located]:
    """Every file with any evidence, best first (see the module docstring). ``lexical``: each
    file's BM25 score; ``about``: kinds of files the task is about (never weighted down);
    ``extra_names``: names learned by earlier cycles (used to pick definitions); ``verbatim``: the
    files holding each string of ``verbatim_strings`` word for word."""
    score: dict[str, float] = defaultdict(float)
    why: dict[str, list[str]] = defaultdict(list)
    top = max(lexical.values(), default=0.0)
    for p, value in lexical.items():
        if top > 0:
            score[p] += W_LEXICAL * value / top
    for p, value in _named(reading, repo, verbatim or {}, why).items():
        score[p] += min(NAME_CAP, value)
    hits = _pointed(reading, repo, score, why)
    return _ordered(reading, repo, score, why, lexical, _held(about, reading, repo, hits), extra_names)


def _named(
    reading: Reading, repo: Repo, verbatim: Mapping[str, set[str]], why: dict[str, list[str]]
) -> dict[str, float]:
    """Evidence from names: a traceback frame's function or a quoted error class defined in a file,
    a ``Class.method`` it defines, a string it holds word for word; more when few files do."""
    named: dict[str, float] = defaultdict(float)
    errors = [e for e in reading.errors if " " not in e]  # in the task's order: reasons alike every run
    frames = _own_frames(reading, repo)
    for name in dict.fromkeys([*frames, *errors]):  # names in prose: measured to mislead
        where = repo.definers.get(name, set())
        if not where or len(where) > 25:
            continue
        weight = W_FRAME if name in frames else W_ERROR
        for p in where:
            named[p] += weight / len(where)
            if len(why[p]) < 6:
                why[p].append(f"defines {name}" + (" (a traceback frame)" if name in frames else ""))
    for qualified in dict.fromkeys(".".join(m.split(".")[-2:]) for m in reading.modules if "." in m):
        where = repo.definers.get(qualified, set()) if qualified[:1].isupper() else set()
        for p in where if len(where) <= 2 else ():
            named[p] += W_METHOD / len(where)
            why[p].append(f"defines {qualified}")
    for text, holders in verbatim.items():
        sources = [p for p in holders if repo.kinds.get(p) == "source"]
        for p in sources if len(sources) <= MAX_HOLDERS else ():
            named[p] += W_VERBATIM / len(sources)
            if len(why[p]) < 6:
                why[p].append(f"holds {text!r}")
    return named


def _own_frames(reading: Reading, repo: Repo) -> list[str]:
    """The functions of the traceback frames in the repository's own code: a frame's file in one of
    its folders (``site-packages/fastapi/routing.py``; a since renamed ``httpx/client.py``) or at
    its root. A folder below the top counts with the folder it sits in (``xarray/core``, not
    ``numpy/core``). A frame in another package (``click/core.py``, the standard library's) or in the
    reporter's script only ran the code: its ``invoke`` or ``__call__`` is not the bug's."""
    out = []
    for file, function in reading.framed:
        parts = [p for p in file.split("/") if p]
        ups = repo.folders.get(parts[-2], set()) if len(parts) >= 2 else set()
        if "" in ups or (len(parts) >= 3 and parts[-3] in ups) or (parts and parts[-1] in repo.files):
            out.append(function)
    return list(dict.fromkeys(out))


def _pointed(
    reading: Reading, repo: Repo, score: dict[str, float], why: dict[str, list[str]]
) -> dict[str, str]:
    """Evidence from what the task points at (adds to ``score``): a named path (the innermost
    traceback frame's most), a dotted module, the module a named test tests, the few files
    importing a module the prose names. Returns the files the named paths hit."""
    errors = {e for e in reading.errors if " " not in e}
    hits = _path_hits(reading, repo.paths)
    for p, named_path in hits.items():
        score[p] += W_PATH
        why[p].insert(0, f"named: {named_path}")
    innermost = next((p for named in reversed(reading.paths) for p in hits if hits[p] == named), None)
    if innermost is not None and reading.frames:
        score[innermost] += W_INNERMOST
    modules = _module_hits(reading, repo)
    said = [*reading.names, *reading.modules, *reading.flags]
    for p, (spelling, with_folder) in spelled_by(said, repo.code).items():
        if p not in hits and p not in modules:
            score[p] += W_SPELLED[with_folder]
            why[p].append(f"spelled by {spelling}")
    for p, module in modules.items():
        error_home = module.rsplit(".", 1)[-1] in errors  # ``shop.errors.ConfigError``: where it is defined
        score[p] += W_ERROR if error_home else W_MODULE
        why[p].insert(0, f"module named: {module}")
        if p.endswith("/__init__.py") and not error_home:  # a package named: the bug is in one of its modules
            folder = p[: -len("__init__.py")]
            inside = [q for q in repo.code if q.startswith(folder) and "/" not in q[len(folder) :] and q != p]
            for q in inside if len(inside) <= MAX_PACKAGE else ():
                score[q] += W_PACKAGE
                why[q].append(f"in the package named: {module}")
    for p, test in _tested(reading, repo, hits).items():
        score[p] += W_TESTED
        why[p].insert(0, f"tested by {test}")
    for module in reading.mentioned:  # a pasted script's ``import json`` is how it runs, not the bug
        users = repo.importers.get(module, set())
        if 0 < len(users) <= MAX_IMPORTERS and not _module_hits(Reading(modules=(module,)), repo):
            for p in users:
                score[p] += W_IMPORTER / len(users) ** 0.5
                why[p].append(f"imports {module}")
    return hits


def _ordered(
    reading: Reading,
    repo: Repo,
    score: Mapping[str, float],
    why: dict[str, list[str]],
    lexical: Mapping[str, float],
    about: frozenset[str],
    extra_names: Sequence[str],
) -> list[Located]:
    """The files best first, kinds the task is not about weighted down, each with its reasons and
    (the best ``WITH_DEFINITIONS``) the definitions the task is most about."""
    weighted = []
    for p, value in score.items():
        kind = repo.kinds.get(p) or kind_of(p)
        weighted.append((round(value if kind == "source" or kind in about else value * OTHER_KIND, 4), p))
    weighted.sort(key=lambda x: (-x[0], x[1]))
    names = {*reading.names, *extra_names}
    words = set(analyze(reading.prose, stem=True))
    out = []
    for i, (value, p) in enumerate(weighted):
        if p in lexical and not any(w.startswith(("named", "module")) for w in why[p]):
            why[p].append("words of the task")
        f = repo.files.get(p)
        defs = _definitions(f, names, words) if f is not None and i < WITH_DEFINITIONS else ()
        out.append(Located(p, value, tuple(why[p]), defs))
    return out
