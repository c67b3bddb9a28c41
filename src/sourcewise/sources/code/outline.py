"""What a source file defines and imports, and where its chunks start: pure functions over text.

Seed 004's iterative retrieval refines its next query from the files it found: the names they
define (the codebase's own terms) and the modules they import (where to look next). Python is read
with ``ast``; the other language families by a linear scan of each line's leading words, which is
wrong on odd layouts but cheap and never slow. The same symbols give each search hit its title
(the enclosing ``def``/``class``) and align the index's chunks to top-level definitions.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import PurePosixPath

__all__ = ["LANGUAGES", "Outline", "Symbol", "chunk_spans", "enclosing", "language_of", "outline"]

LANGUAGES: dict[str, tuple[str, ...]] = {
    "python": ("py", "pyi"),
    "javascript": ("js", "mjs", "cjs", "jsx"),
    "typescript": ("ts", "tsx", "mts", "cts"),
    "go": ("go",),
    "rust": ("rs",),
    "java": ("java",),
    "kotlin": ("kt", "kts"),
    "scala": ("scala",),
    "csharp": ("cs",),
    "c": ("c", "h"),
    "cpp": ("cc", "cpp", "cxx", "hpp", "hh", "hxx", "h"),
    "ruby": ("rb",),
    "php": ("php",),
    "swift": ("swift",),
    "shell": ("sh", "bash", "zsh"),
    "markdown": ("md", "markdown"),
    "yaml": ("yml", "yaml"),
    "toml": ("toml",),
    "json": ("json",),
    "sql": ("sql",),
    "html": ("html", "htm"),
    "css": ("css", "scss"),
}
ALIASES = {"py": "python", "js": "javascript", "ts": "typescript", "rs": "rust", "c++": "cpp",
           "c#": "csharp", "cs": "csharp", "rb": "ruby", "sh": "shell", "bash": "shell", "md": "markdown",
           "golang": "go", "kt": "kotlin", "yml": "yaml"}  # fmt: skip
_FAMILY = {ext: lang for lang, exts in reversed(LANGUAGES.items()) for ext in exts}

DEFINE_WORDS = frozenset(
    {"def", "class", "function", "fn", "func", "struct", "enum", "trait", "interface", "type", "mod",
     "module", "object", "record", "impl", "fun", "const", "let", "var", "static", "namespace", "union"}
)  # fmt: skip
MODIFIERS = frozenset(
    {"export", "default", "pub", "async", "public", "private", "protected", "static", "final", "abstract",
     "unsafe", "extern", "inline", "override", "open", "internal", "sealed", "data", "suspend", "declare",
     "partial", "virtual", "readonly", "crate", "pub(crate)", "pub(super)", "local"}
)  # fmt: skip
IMPORT_WORDS = frozenset(
    {"import", "use", "using", "require", "require_relative", "#include", "include", "source"}
)
_DECLARES = DEFINE_WORDS | MODIFIERS | IMPORT_WORDS
# Words that open a definition only at the top level; inside a function they are locals.
TOP_ONLY = frozenset({"const", "let", "var", "static"})


@dataclass(frozen=True)
class Symbol:
    """A definition: 1-based inclusive lines, qualified name (``Class.method``), nesting depth."""

    name: str
    start: int
    end: int
    depth: int = 0


@dataclass(frozen=True)
class Outline:
    """A file's language, the names it defines, the modules it imports and its definitions."""

    language: str | None
    defines: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    symbols: list[Symbol] = field(default_factory=list)


def language_of(path: str) -> str | None:
    """``"src/a.py"`` -> ``"python"``; ``None`` for an extension not in ``LANGUAGES``."""
    suffix = PurePosixPath(path).suffix.lower().lstrip(".")
    return _FAMILY.get(suffix)


def outline(path: str, text: str) -> Outline:
    """Definitions and imports of ``text`` (the content of ``path``); never raises on bad source."""
    language = language_of(path)
    if language == "python":
        try:
            return _python(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # not valid Python (or too deep for ast): the line scan still finds most of it
    if language in (None, "markdown", "json", "yaml", "toml", "html", "css"):
        return Outline(language)
    return _scan(language, text)


def _python(text: str) -> Outline:
    tree = ast.parse(text)
    symbols: list[Symbol] = []
    imports: list[str] = []
    defines: list[str] = []

    def visit(node: ast.AST, prefix: str, depth: int) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                symbols.append(Symbol(name, start, child.end_lineno or child.lineno, depth))
                if depth == 0 or isinstance(node, ast.ClassDef):
                    defines.append(name)
                visit(child, f"{name}.", depth + 1)
            elif isinstance(child, ast.Import):
                imports.extend(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                imports.append("." * child.level + (child.module or ""))
            elif depth == 0 and isinstance(child, ast.Assign | ast.AnnAssign):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                defines.extend(t.id for t in targets if isinstance(t, ast.Name))
            elif not isinstance(child, ast.expr):
                visit(child, prefix, depth)  # if/try/with blocks at any level hold definitions too

    visit(tree, "", 0)
    symbols.sort(key=lambda s: (s.start, s.depth))
    return Outline("python", list(dict.fromkeys(defines)), list(dict.fromkeys(imports)), symbols)


_SPACED = str.maketrans({**{c: f" {c} " for c in "({=<;,"}, ":": " "})
MAX_WORDS = 10  # a declaration's keywords, name and first delimiters: all a line is read for
WORDS_FROM = 400  # characters of a line those lie within


def _words(line: str) -> list[str]:
    """Leading words of a line, split on white space and on ``(``, ``{``, ``:``, ``=``, ``<`` (the
    delimiters but ``:`` kept as words). One translate and split, not a loop over characters: the
    loop reads every line of every candidate file."""
    return line[:WORDS_FROM].translate(_SPACED).split()[:MAX_WORDS]


def _name(word: str) -> str:
    cut = "".join(ch if ch.isalnum() or ch in "_$" else " " for ch in word).split()
    return cut[0] if cut else ""


def _quoted(line: str) -> str | None:
    for quote in ('"', "'", "<", "`"):
        start = line.find(quote)
        if start >= 0:
            end = line.find(">" if quote == "<" else quote, start + 1)
            if end > start + 1:
                return line[start + 1 : end]
    return None


def _import(words: list[str], line: str) -> str | None:
    if "from" in words and words[0] in ("import", "export"):
        return _quoted(line[line.rfind("from") :])
    quoted = _quoted(line)
    if quoted is not None:
        return quoted
    rest = line[len(words[0]) :].split()
    if rest[:1] == ["static"]:  # Java's ``import static a.b.C;``
        rest = rest[1:]
    return rest[0].rstrip(";{").strip() or None if rest else None


def _definition(words: list[str], depth: int) -> str | None:
    i = 0
    while i < len(words) and words[i] in MODIFIERS:
        i += 1
    if i >= len(words) or words[i] not in DEFINE_WORDS or (words[i] in TOP_ONLY and depth > 0):
        return None
    rest = words[i + 1 :]
    if words[i] == "func" and rest[:1] == ["("]:  # Go method: func (r *T) Name(
        rest = rest[rest.index(")") + 1 :] if ")" in rest else rest[3:]
        rest = [w.split(")", 1)[-1] for w in rest]
    for word in rest:
        name = _name(word)
        if name and name not in MODIFIERS and name not in ("mut", "async"):
            return name
    return None


def _scan(language: str | None, text: str) -> Outline:
    lines = text.splitlines()
    imports: list[str] = []
    defines: list[str] = []
    opened: list[tuple[int, str, int]] = []  # (indent, qualified name, start) of definitions still open
    symbols: list[Symbol] = []
    in_go_imports = False
    for number, raw in enumerate(lines, 1):
        stripped = raw.strip()
        if not stripped:
            continue
        indent = len(raw) - len(raw.lstrip())
        if in_go_imports:
            in_go_imports = not stripped.startswith(")")
            if in_go_imports and (target := _quoted(stripped)):
                imports.append(target)
            continue
        words = _words(stripped.replace("pub(crate)", "pub").replace("pub(super)", "pub"))
        if not words:  # a line of delimiters only (``:`` in a shell script): nothing declared
            continue
        required = stripped.find("require(")
        if required >= 0 and words[0] in _DECLARES and (target := _quoted(stripped[required:])):
            imports.append(target)  # ``const fs = require('fs')``; a call elsewhere is not an import
            continue
        if words[0] in IMPORT_WORDS or (words[0] == "export" and "from" in words) or stripped[:2] == ". ":
            if language == "go" and words[:2] == ["import", "("]:
                in_go_imports = True
            elif target := _import(words, stripped):
                imports.append(target)
            continue
        while opened and opened[-1][0] >= indent:
            closed = opened.pop()
            symbols.append(Symbol(closed[1], closed[2], number - 1, len(opened)))
        if (name := _definition(words, len(opened))) is None:
            continue
        qualified = f"{opened[-1][1]}.{name}" if opened else name
        if not opened or "." not in opened[-1][1]:
            defines.append(qualified)
        opened.append((indent, qualified, number))
    while opened:
        closed = opened.pop()
        symbols.append(Symbol(closed[1], closed[2], len(lines), len(opened)))
    symbols.sort(key=lambda s: (s.start, s.depth))
    return Outline(language, list(dict.fromkeys(defines)), list(dict.fromkeys(imports)), symbols)


def enclosing(symbols: list[Symbol], line: int) -> str | None:
    """The innermost definition around ``line`` (``Class.method``), or ``None`` at module level."""
    best: Symbol | None = None
    for symbol in symbols:
        if symbol.start > line:
            break
        if symbol.end >= line and (best is None or symbol.depth >= best.depth):
            best = symbol
    return best.name if best else None


def chunk_spans(total_lines: int, symbols: list[Symbol], size: int = 40) -> list[tuple[int, int]]:
    """1-based inclusive ``(start, end)`` windows of at most ``size`` lines, cut at top-level
    definitions where possible, so a function is not split between chunks unless it is long."""
    if total_lines <= 0:
        return []
    starts = sorted({1, *(s.start for s in symbols if s.depth == 0 and 1 <= s.start <= total_lines)})
    segments = [(a, b - 1) for a, b in zip(starts, [*starts[1:], total_lines + 1], strict=True)]
    spans: list[tuple[int, int]] = []
    cur_start, cur_end = segments[0][0], segments[0][0] - 1
    for a, b in segments:
        if b - cur_start + 1 <= size:
            cur_end = b
            continue
        if cur_end >= cur_start:
            spans.append((cur_start, cur_end))
        while b - a + 1 > size:
            spans.append((a, a + size - 1))
            a += size
        cur_start, cur_end = a, b
    if cur_end >= cur_start:
        spans.append((cur_start, cur_end))
    return spans
