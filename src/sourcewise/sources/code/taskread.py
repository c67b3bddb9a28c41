"""Reading a task like an engineer: what it names exactly, and the prose around it.

A bug report names things: file paths, dotted modules (``flask.cli``), functions, classes and
methods (``NetRCAuth``, ``Response.iter_lines``), error classes and messages, traceback frames
(``File ".../attr/_make.py", line 2181, in _make_init``, and as IPython, pytest and pdb print
them), config keys (``SESSION_COOKIE_HTTPONLY``)
and command-line flags (``--at``). Those are near-certain pointers and are searched first and
exactly; the prose is searched second. A path (``src/flask/cli.py``, a frame's
``~/.venv/lib/python3.10/site-packages/_pytest/runner.py``) is read as a path only: a pointer matched
by its last parts against the tree's files, never prose, so an environment's folders
(``site-packages``, ``virtualenvs``, a user's home) never become key terms. A URL stays prose.
Environment dumps (``pip freeze``, "Python version: 3.10", a pasted pytest run's header:
``platform linux -- Python 3.12``, ``rootdir:``, ``=== test session starts ===``), timestamped
log lines and a template's sections on the reporter's setup (``### OS``, ``### Sphinx extensions``)
are context, not key terms: they are dropped from the prose, as is an issue template's scaffolding,
the same in every report of a project (``### Describe the bug``, ``**Describe the solution you'd
like**``, ``- [x] minimal example if possible``). Measured on the retrieve benchmark's tuning tasks:
one cycle's Acc@1 78 -> 80 of 107, @10 103 -> 104.

Pure and linear: every pattern is RE2 (outside text), and the input is cut at ``MAX_TEXT``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import re2  # type: ignore[import-untyped]

from sourcewise.text.analyze import analyze
from sourcewise.text.sanitize import utf8

__all__ = ["MAX_TEXT", "Reading", "read_task", "tails", "task_words"]

MAX_TEXT = 20_000
MAX_NAMES = 60
CODE_EXTS = "py|pyi|js|mjs|cjs|jsx|ts|tsx|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|scala|sh"
_FUNC = r"(?:[A-Za-z_]\w{0,100}\.){0,3}([A-Za-z_<][\w<>]{0,100})"  # ``Class.method``: the method
# Traceback frames as each tool prints them, each giving (file, function):
_FRAMES = (  # IPython 8 prints ``File ~/x.py:12, in f()``, IPython 7 ``~/x.py in f()``
    re2.compile(r'File "([^"\n]{1,400})", line \d+, in ' + _FUNC),  # CPython
    re2.compile(r"(?m)^\s*File ([^\s\",]{1,400}\.py):\d+, in " + _FUNC),  # IPython 8
    re2.compile(r"(?m)^\s*([^\s\",:]{1,400}\.py) in " + _FUNC + r"\("),  # IPython 7
    re2.compile(r"(?m)^\s*([^\s\",:]{1,400}\.py):\d+: in " + _FUNC),  # pytest: ``src/x.py:12: in f``
    re2.compile(r"([^\s\"(),:]{1,400}\.py)\(\d+\)" + _FUNC + r"\(\)"),  # pdb: ``x.py(12)f()``
)
_PATH = re2.compile(r"[\w./\\-]{0,300}\w\.(?:" + CODE_EXTS + r")\b")
# a path as written: parts joined by ``/`` or ``\`` (a path only when rooted, of three or more parts,
# or ending in a file's name: "and/or", "I/O" and ``owner/repo`` stay prose); a URL is matched whole
# so that its parts are never taken for a path
_PATHISH = re2.compile(
    r"[A-Za-z][\w+.-]{0,20}://[^\s`'\"<>()\[\]]+"
    r"|(?:[A-Za-z]:|~|\.{1,2})?[/\\]?[\w.@+-]+(?:[/\\][\w.@+-]+)+[/\\]?"
)
_FILE_NAME = re2.compile(r"\w\.[A-Za-z]\w{0,9}$")
# an issue template's scaffolding, the same in every report of a project: a Markdown heading
# (``### Describe the bug``), a line that is one bold phrase without code in it (``**Is your feature
# request related to a problem?**``), a checklist item (``- [x] minimal example if possible``); at
# most three spaces in, as Markdown has it: a ``# comment`` indented four is code
_SCAFFOLD = re2.compile(r"^ {0,3}(?:#{1,6}\s.*|\*\*[^*`]{1,300}\*\*:?|[-*]\s+\[[ xX]\]\s.*)$")
# a template's section on the reporter's setup, context like a pasted environment dump: its title's
# words (``Python version``, ``Installed packages``, ``OS``)
_SETUP = frozenset(
    "version versions os platform environment extensions installed dependencies packages system".split()
)
_TICKS = re2.compile(r"`{1,3}([^`\n]{1,200})`{1,3}")
_IDENT = re2.compile(r"[A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_](\()?")
_IMPORT = re2.compile(
    r"\bfrom\s+([A-Za-z_][\w.]{0,200})\s+import\s+\(?([\w, ]{1,300})|\bimport\s+([A-Za-z_][\w.]{0,200})"
)
_FLAG = re2.compile(r"(?:^|[\s(\[=`'\"])(--[a-zA-Z][\w-]{1,60})")
_ERROR = re2.compile(r"\b([A-Z]\w{0,80}(?:Error|Exception|Warning))\b(?::\s*([^\n]{1,300}))?")
_DUMP = re2.compile(
    r"(?i)^\s*(?:[-*]\s*)?(?:"
    r"[\w.\[\]-]{1,80}\s*(?:==|>=|<=|~=|===)\s*[\w.+!*-]{1,40}"  # pip freeze, requirements
    r"|[\w.-]{1,80}\s@\s\S+"  # pip freeze: name @ url
    r"|[\w .()/-]{0,40}\bversion\s*[:=]?\s*v?[\d.]{1,20}\S{0,20}"  # "Python version: 3.10.2"
    r"|\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d\S{0,20}.*"  # timestamped log line
    r"|[\w.-]{1,60}\s{2,}v?\d{1,4}(?:\.\d{1,6}){1,4}\S{0,20}"  # "package    1.2.3" (pip list)
    r"|platform \w{1,20} -- Python \d.*"  # a pasted pytest run's header ...
    r"|(?:rootdir|cachedir|configfile|inifile): .*|plugins: [\w.-]{1,60}-\d.*|collected \d{1,9} items?\b.*"
    r"|={3,}[^=]{0,120}={3,}"  # ... and its "=== test session starts ===" rules
    r")\s*$"
)
_TEST_NAME = re2.compile(r"\btest_\w{1,100}")
# a link to lines of a repository's file (GitHub, GitLab): the path after the ref, the lines
_LINKED = re2.compile(
    r"https?://(?:www\.)?git(?:hub|lab)\.com/[\w.-]{1,100}/[\w.-]{1,100}/(?:-/)?blob/[\w.-]{1,100}/"
    r"([\w./-]{1,300})#L(\d{1,7})(?:-L(\d{1,7}))?"
)
_TRACE_LINE = re2.compile(r'^\s*(?:Traceback \(most recent call last\)|File "[^"\n]{1,400}", line \d+)')
STOP_NAMES = frozenset(
    {"self", "cls", "None", "True", "False", "print", "import", "from", "return", "def", "class", "e.g",
     "i.e", "etc", "http", "https", "www", "com", "org", "github", "README", "TODO", "assert", "lambda",
     "async", "await", "yield", "pass", "raise", "with", "for", "while", "if", "else", "elif", "try",
     "except", "finally", "in", "is", "not", "and", "or", "str", "int", "dict", "list", "tuple", "set",
     "bool", "float", "bytes", "object", "type", "len", "args", "kwargs", "main", "__main__", "__name__"}
)  # fmt: skip


@dataclass(frozen=True)
class Reading:
    """What a task names, best pointers first, and its prose without dumps and logs."""

    paths: tuple[str, ...] = ()  # file paths named in the prose or in traceback frames
    modules: tuple[str, ...] = ()  # dotted names (``flask.cli``, ``requests.exceptions.JSONDecodeError``)
    names: tuple[str, ...] = ()  # identifiers: functions, classes, methods, config keys
    frames: tuple[str, ...] = ()  # functions of traceback frames, innermost last
    framed: tuple[tuple[str, str], ...] = ()  # each frame's (file, function), innermost last
    errors: tuple[str, ...] = ()  # error classes and messages quoted
    flags: tuple[str, ...] = ()  # command-line flags
    prose: str = ""  # the text less environment dumps, logs and traceback lines
    dropped: int = 0  # lines dropped as dumps or logs
    tests: tuple[str, ...] = ()  # test functions named outside the code (a repro's ``test_x`` is code)
    mentioned: tuple[str, ...] = ()  # modules named outside the code (a repro's ``import json`` is code)
    linked: tuple[tuple[str, int, int], ...] = ()  # lines a link points at: (path, first, last)

    @property
    def about_tests(self) -> bool:
        """Whether the task names a test file or test function (saying "test" is not enough, nor a
        ``test_`` name in a pasted script)."""
        return any(_is_test_path(p) for p in self.paths) or bool(self.tests)

    @property
    def exact(self) -> tuple[str, ...]:
        """Every exact pointer, for display."""
        return (*self.paths, *self.modules, *self.names, *self.flags)


def _is_test_path(path: str) -> bool:
    low = path.replace("\\", "/").lower()
    name = low.rsplit("/", 1)[-1]
    return "/tests/" in f"/{low}" or "/test/" in f"/{low}" or name.startswith("test_") or "_test." in name


def _codeish(word: str, call: bool, ticked: bool) -> bool:
    """An identifier that is code, not an English word: snake_case, CamelCase with an inner capital,
    ALL_CAPS keys, dotted names, a call ``name(``, or anything in backticks."""
    bare = word.strip("_")
    if not bare or word in STOP_NAMES or len(word) < 2:
        return False
    if ticked or call or "_" in bare or "." in word:
        return True
    return any(c.isupper() for c in bare[1:]) and any(c.islower() for c in bare)


def _outside_code(text: str) -> list[str]:
    """The lines of ``text`` outside its fenced code blocks (a pasted script or session)."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and not line.lstrip().startswith((">>>", "...", "$ ")):
            out.append(line)
    return out


def _keep_line(line: str) -> bool:
    return not _DUMP.match(line)


def _is_path(token: str) -> bool:
    """A file system path (a URL is not: a docs link's anchor names a module, ``#sympy.core.numbers``;
    measured: blanking URLs cost a tuning task its rank 1)."""
    if "://" in token:
        return False
    if token[:1] in "/\\~." or token[1:2] == ":":
        return True
    return token.count("/") + token.count("\\") >= 2 or bool(_FILE_NAME.search(token))


def _without_paths(text: str) -> str:
    """``text`` with every path in it blanked (a file's name too: ``conf.py``): a path points at a
    file, its parts are not prose."""
    out: list[str] = []
    at = 0
    for m in _PATHISH.finditer(text):
        token = m.group(0)
        out.append(_PATH.sub(" ", text[at : m.start()]))
        # a URL is prose whole, a code file's name in it too (``.../src/flask/cli.py#L10``)
        out.append(" " if _is_path(token) else token if "://" in token else _PATH.sub(" ", token))
        at = m.end()
    out.append(_PATH.sub(" ", text[at:]))
    return "".join(out)


def tails(paths: Sequence[str]) -> list[str]:
    """What of each path points into a repository: its last two parts (``_path_hits`` matches by
    them), never the folders of the machine it was written on."""
    return ["/".join(p.rstrip("/").split("/")[-2:]) for p in paths]


def task_words(reading: Reading) -> list[str]:
    """The task's words as searched, repeats kept: what it names first (names, modules, a path's
    last parts, never the folders it was written in), then its prose in order."""
    named = (*reading.names, *reading.modules, *tails(reading.paths))
    return [*(t for n in named for t in analyze(n)), *analyze(reading.prose)]


def _frames(text: str) -> list[tuple[str, str]]:
    """Each traceback frame's (file, function) in the order printed (innermost last), whichever
    tool printed it (CPython, IPython, pytest, pdb)."""
    found = {m.start(): (m.group(1), m.group(2)) for pattern in _FRAMES for m in pattern.finditer(text)}
    return [found[at] for at in sorted(found)]


def _named(body: str, ticked: str) -> tuple[list[str], list[str]]:
    """The identifiers ``body`` names (backticked ``ticked`` first) and the modules: ``import x``,
    ``from x import y`` (and ``y``), dotted names."""
    names: list[str] = []
    # ``import x`` and ``from x import y`` name modules (and ``y``)
    modules: list[str] = []
    for m in _IMPORT.finditer(body):
        modules.append((m.group(1) or m.group(3)).rstrip("."))
        names.extend(n for n in (m.group(2) or "").replace(",", " ").split() if n not in STOP_NAMES)
    for source, is_ticked in ((ticked, True), (body, False)):
        for m in _IDENT.finditer(source):
            word, call = m.group(0).rstrip("("), m.group(1) is not None
            if not _codeish(word, call, is_ticked):
                continue
            if "." in word:
                parts = [p for p in word.split(".") if p]
                if parts and parts[-1] in CODE_EXTS.split("|"):
                    continue  # a file name, found as a path
                if parts and parts[-1].startswith("__") and parts[-1].endswith("__"):
                    continue  # ``requests.__version__``, ``Foo.__init__``: context or a dunder, not a module
                modules.append(word)
                names.extend(p for p in parts[1:] if p not in STOP_NAMES and len(p) > 1)
            else:
                names.append(word)
    return names, modules


def _on_setup(heading: str) -> bool:
    """Whether a template's heading opens a section on the reporter's setup: a title of setup words
    and at most one other (``### Python version``, ``**Environment (please complete the following
    information):**``), never one that says more (``## Steps to reproduce on a Linux system``,
    ``### Version 2.0 regression``, ``## os.walk follows symlinks``)."""
    words = [w.strip(":,;") for w in heading.split("(", 1)[0].strip("#*: \t").lower().split()]
    setup = sum(w in _SETUP for w in words)
    return setup > 0 and len(words) - setup <= 1


def _kept_lines(text: str) -> tuple[list[str], int]:
    """``text``'s lines less dumps and logs, an issue template's scaffolding outside fenced code,
    and traceback lines; and how many were dropped as dumps, logs or scaffolding."""
    kept: list[str] = []
    dropped = 0
    fenced = context = said = False
    for line in text.splitlines():
        fenced = fenced != line.lstrip().startswith(("```", "~~~"))
        heading = not fenced and bool(_SCAFFOLD.match(line))
        if heading:  # a section on the reporter's setup (``### Sphinx extensions``, ``### OS``) is context
            context, said = _on_setup(line), False
        elif context and not fenced:  # it ends at the blank line after what it says, or the next heading
            if line.strip():
                said = True
            elif said:
                context = False
        if not _keep_line(line) or heading or context:
            dropped += 1
        elif not _TRACE_LINE.match(line):
            kept.append(line)
    return kept, dropped


def read_task(text: str) -> Reading:
    """Pull out what ``text`` names (exact pointers) and its prose (see the module docstring)."""
    text = utf8(text[:MAX_TEXT])
    frames = _frames(text)
    kept, dropped = _kept_lines(text)
    body = "\n".join(kept)
    paths = [p for p, _ in frames if not p.startswith("<")]
    paths += [m.group(0) for m in _PATH.finditer(body)]
    body = _without_paths(body)
    spans = (m.group(1) for m in _TICKS.finditer(body))
    ticked = " ".join(s for s in spans if len(s.split()) <= 3)  # code in backticks, not a quoted sentence
    names, modules = _named(body, ticked)
    errors: list[str] = []
    for m in _ERROR.finditer(text):
        errors.append(m.group(1))
        names.append(m.group(1))
        if m.group(2):
            errors.append(m.group(2).strip())
    said = "\n".join(_outside_code(body))
    tests = [m.group(0) for m in _TEST_NAME.finditer(said)]
    frame_names = [f for _, f in frames if not f.startswith("<")]
    names = [*frame_names, *names]
    flags = [m.group(1) for m in _FLAG.finditer(body)]
    return Reading(
        paths=tuple(dict.fromkeys(p.replace("\\", "/") for p in paths))[:MAX_NAMES],
        modules=tuple(dict.fromkeys(modules))[:MAX_NAMES],
        names=tuple(dict.fromkeys(names))[:MAX_NAMES],
        frames=tuple(dict.fromkeys(frame_names)),
        framed=tuple(dict.fromkeys((p.replace("\\", "/"), f) for p, f in frames if not f.startswith("<"))),
        errors=tuple(dict.fromkeys(errors))[:MAX_NAMES],
        flags=tuple(dict.fromkeys(flags))[:MAX_NAMES],
        prose=body,
        dropped=dropped,
        tests=tuple(dict.fromkeys(tests))[:MAX_NAMES],
        mentioned=tuple(m for m in dict.fromkeys(modules) if m in said)[:MAX_NAMES],
        linked=tuple(dict.fromkeys(_linked(text)))[:MAX_NAMES],
    )


def _linked(text: str) -> list[tuple[str, int, int]]:
    """The repository lines the task links to (``.../blob/<ref>/sphinx/themes/basic/layout.html#L107``)."""
    out = []
    for m in _LINKED.finditer(text):
        first = int(m.group(2))
        out.append((m.group(1), first, max(first, int(m.group(3) or first))))
    return out
