"""Documents to chunks: split on headings, then on paragraphs, each chunk with its heading path
and the lines it came from. Pure: text in, chunks out.

Markdown (ATX ``#`` headings and setext underlines, fenced code kept whole), reStructuredText
(underlined and overlined titles, levels in order of first use) and plain text. A front-matter
block (``---`` ... ``---``) at the top of Markdown gives ``title`` and ``date`` and is not indexed.
Heading titles are cleaned of markup for the reader (``text.markup.clean``: MkDocs anchors, links,
HTML, escapes). One pass over the lines, and only RE2 patterns, so the time is linear in the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sourcewise.text.markup import clean

__all__ = ["TARGET_CHARS", "Chunk", "Document", "chunk_document"]

TARGET_CHARS = 1200
"""A chunk grows paragraph by paragraph until it passes this size (a heading always starts one)."""
MAX_CHUNK_CHARS = 4000
"""A single paragraph longer than this is cut on line boundaries."""
_RST_ADORN = set("=-~^*+#`'\":.,_")


@dataclass(frozen=True)
class Chunk:
    text: str
    heading_path: tuple[str, ...]
    start_line: int  # 1-based, inclusive
    end_line: int


@dataclass
class Document:
    title: str | None
    date: str | None
    chunks: list[Chunk] = field(default_factory=list)


def _front_matter(lines: list[str]) -> tuple[dict[str, str], int]:
    if not lines or lines[0].strip() != "---":
        return {}, 0
    meta: dict[str, str] = {}
    for i in range(1, min(len(lines), 200)):
        if lines[i].strip() in ("---", "..."):
            return meta, i + 1
        key, sep, value = lines[i].partition(":")
        if sep and key.strip().isidentifier():
            meta[key.strip().lower()] = value.strip().strip("\"'")
    return {}, 0  # no closing line: not front matter


def _atx(line: str) -> tuple[int, str] | None:
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3 or not stripped.startswith("#"):
        return None
    level = len(stripped) - len(stripped.lstrip("#"))
    rest = stripped[level:]
    if level > 6 or (rest and not rest[0].isspace()):
        return None
    return level, rest.strip().rstrip("#").strip()


def _adorned(line: str) -> bool:
    """Whether ``line`` starts (after spaces) with an adornment character: ``line.lstrip()[:1] in
    _RST_ADORN``, looking at one character when the line does not start with a space."""
    first = line[:1]
    return first in _RST_ADORN or (first.isspace() and line.lstrip()[:1] in _RST_ADORN)


def _underline(line: str, title: str) -> str | None:
    """The adornment character if ``line`` underlines ``title`` (setext or rst), else ``None``."""
    s = line.strip()
    if len(s) < 2 or s[0] not in _RST_ADORN or s.count(s[0]) != len(s) or not title.strip():
        return None
    if _atx(title) is not None or title.strip()[0] in "-*+>|":
        return None
    return s[0]


class _Builder:
    def __init__(self) -> None:
        self.chunks: list[Chunk] = []
        self.path: list[tuple[int, str]] = []
        self.buf: list[str] = []
        self.size = 0  # characters in buf, newlines counted
        self.start = 0

    def heading(self, level: int, title: str) -> None:
        self.flush()
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        # A heading path is shown as written for a reader: "Async tests", not
        # "Async tests { #async-tests }" (MkDocs anchors, links, <abbr>, escapes out).
        self.path.append((level, clean(title)))

    def add(self, lineno: int, line: str) -> None:
        blank = not line or line.isspace()  # what ``not line.strip()`` says, without a copy
        if not self.buf:
            if blank:
                return
            self.start = lineno
        self.buf.append(line)
        self.size += len(line) + 1
        if (blank and self.size >= TARGET_CHARS) or self.size >= MAX_CHUNK_CHARS:
            self.flush()

    def flush(self) -> None:
        while self.buf and not self.buf[-1].strip():
            self.buf.pop()
        if self.buf:
            text = "\n".join(self.buf)
            end = self.start + len(self.buf) - 1
            self.chunks.append(Chunk(text, tuple(t for _, t in self.path), self.start, end))
        self.buf = []
        self.size = 0


def chunk_document(text: str, fmt: str, *, max_chunks: int) -> Document:
    """``fmt`` is ``markdown``, ``rst`` or ``text``; at most ``max_chunks`` chunks come back."""
    lines = text.splitlines()
    meta, first = _front_matter(lines) if fmt == "markdown" else ({}, 0)
    b = _Builder()
    levels: dict[str, int] = {}
    fence: str | None = None
    markdown, rst = fmt == "markdown", fmt == "rst"
    count = len(lines)
    i = first
    # Cheap first looks before the checks: most lines are neither fences, headings nor underlined.
    while i < count and len(b.chunks) < max_chunks:
        line = lines[i]
        if markdown and ("```" in line or "~~~" in line) and (marker := line.lstrip()[:3]) in ("```", "~~~"):
            fence = None if fence == marker else (fence or marker)
        if markdown and fence is None and "#" in line[:4] and (heading := _atx(line)) is not None:
            b.heading(*heading)
            i += 1
            continue
        if fence is None and fmt != "text" and i + 1 < count and _adorned(lines[i + 1]):
            under = _underline(lines[i + 1], line)
            # Markdown: only "=" / "-" underlines, and only under a one-line paragraph.
            if markdown and (under not in ("=", "-") or (b.buf and b.buf[-1].strip())):
                under = None
            if under is not None:
                if rst and b.buf and _underline(b.buf[-1], line) == under:
                    b.size -= len(b.buf.pop()) + 1  # an overline belongs to the title
                level = levels.setdefault(under, len(levels) + 1) if rst else (1 if under == "=" else 2)
                b.heading(level, line.strip())
                i += 2
                continue
        b.add(i + 1, line)
        i += 1
    b.flush()
    title = clean(meta.get("title") or "") or _first_heading(b.chunks)
    return Document(title=title, date=meta.get("date"), chunks=b.chunks[:max_chunks])


def _first_heading(chunks: list[Chunk]) -> str | None:
    for c in chunks:
        if c.heading_path:
            return c.heading_path[0]
    return None
