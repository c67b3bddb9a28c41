"""Extractive answers with no model: the units of a text an answer is made of, and the answer
assembled from them, each sentence ending with its ``[n]``.

A text is cut into units (``units``): sentences of prose, list items, table rows, definition
lines (a man page's option and what it does) and code blocks (Markdown fences; reST `code-block`
directives and `::` literal blocks), kept as fenced blocks with their
language. Headings are units too, for context; admonition and directive lines are dropped; markup
is cleaned from every unit (``text.markup``). Which units answer a question is ``answer.pick``'s.
Also here: checking that a cited passage supports a sentence, used on a model's answer.

Linear: one pass over the lines, no backtracking pattern.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from sourcewise.models import Citation, RankedHit
from sourcewise.text.analyze import analyze
from sourcewise.text.markup import CODE_SPAN, clean, dehyphenate, directive
from sourcewise.text.words import printable

__all__ = [
    "MAX_SENTENCE",
    "Unit",
    "assemble",
    "procedural",
    "sentences",
    "strip_controls",
    "support",
    "units",
    "unmarked",
]

MAX_SENTENCE = 400  # characters; a longer "sentence" is cut into pieces at words (a row, a heading: short)
MAX_CODE_LINES = 15  # a longer code block is cut, with a "..." line
ENDS = ".!?。！？"
STOP = frozenset(
    "the a an of to and or in on is are was be for with by it this that what how 무엇 어떻게".split()
)
UnitKind = Literal["prose", "item", "row", "code", "heading"]


@dataclass(frozen=True)
class Unit:
    """One piece of a text an answer can quote: ``text`` as a reader sees it."""

    text: str
    kind: UnitKind


def strip_controls(text: str) -> str:
    """``text`` on one line and safe for a terminal (``text.words.printable``, the one definition)."""
    return printable(text, one_line=True)


def sentences(text: str, *, wrapped: bool = False) -> list[str]:
    """The quotable units of ``text`` (``units``), headings left out, as strings."""
    return [u.text for u in units(text, wrapped=wrapped) if u.kind != "heading"]


def _code(lang: str, lines: list[str]) -> Unit | None:
    body = [line.rstrip() for line in lines]
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    if not body or all(b.strip().startswith("{{#") for b in body if b.strip()):
        return None  # empty, or only an mdBook include: no code a reader could use
    if len(body) > MAX_CODE_LINES:
        body = [*body[:MAX_CODE_LINES], "..."]
    indent = min(len(b) - len(b.lstrip()) for b in body if b.strip())
    fence = "```" + lang.strip("{} ").split(" ")[0].split(",")[0]
    return Unit(fence + "\n" + "\n".join(b[indent:] for b in body) + "\n```", "code")


def _subsection(line: str, bare: str) -> bool:
    """A man page's subsection ("   Context Line Control"): indented 2-4 spaces, at most five words,
    each capitalized (short function words aside), no punctuation."""
    indent = len(line) - len(line.lstrip(" "))
    words = bare.split()
    return (
        2 <= indent <= 4
        and 0 < len(words) <= 5
        and bare.replace(" ", "").isalpha()
        and words[0][:1].isupper()
        and all(w[:1].isupper() or (w.islower() and len(w) <= 3) for w in words)
    )


def _block_kind(line: str) -> UnitKind | None:
    """The kind of block a Markdown line starts, or None when it continues a paragraph."""
    if line[0] == "#" or (line.isupper() and len(line) <= 40 and "." not in line):
        return "heading"  # Markdown, or a man page's section ("OPTIONS")
    if line[0] == "|":
        return "row"
    if line[0] == ">":
        return "prose"
    if line[:2] in ("- ", "* ", "+ "):
        return "item"
    digits = len(line) - len(line.lstrip("0123456789"))
    if 0 < digits <= 3 and line[digits : digits + 2] in (". ", ") "):
        return "item"
    return None


def units(text: str, *, wrapped: bool = False) -> list[Unit]:
    """The units of ``text`` in order. ``wrapped``: hard-wrapped prose (Markdown, mail, man pages,
    PDF text): a line that continues the one before joins it, and only blank lines and block starts
    (headings, list items, table rows, quotes) break a paragraph; otherwise every line breaks."""
    reader = _Reader(wrapped)
    fence: str | None = None
    literal: tuple[int, str, bool] | None = None  # reST: the indent its block goes past, language, directive
    code: list[str] = []
    lines = dehyphenate(text).split("\n")
    for at, line in enumerate(lines):
        bare = line.strip()
        if literal is not None:
            if not bare or _indent(line) > literal[0]:
                code.append(line)
                continue
            reader.code(literal[1], _options_out(code) if literal[2] else code)
            literal, code = None, []
        if fence is not None:
            if bare.startswith(fence[:3]) and not bare[3:].strip("`~"):
                reader.code(fence[3:], code)
                fence, code = None, []
            else:
                code.append(line)
        elif bare.startswith(("```", "~~~")):
            reader.flush()
            fence = bare
        elif (lang := _literal(bare, lines, at)) is not None:
            said = _before_literal(bare)
            if said:
                reader.line(said, said)
            reader.flush()
            literal = (_indent(line), lang, bare.startswith(".."))
        else:
            reader.line(line, bare)
    if fence is not None:
        reader.code(fence[3:], code)
    elif literal is not None:
        reader.code(literal[1], _options_out(code) if literal[2] else code)
    return reader.finish()


_CODE_DIRECTIVE = re.compile(r"\.\.\s+(?:code-block|code|sourcecode)::\s*([\w+#.-]*)")


def _literal(bare: str, lines: Sequence[str], at: int) -> str | None:
    """The language of the reST literal block the line ``lines[at]`` opens: ``.. code-block::
    python`` gives "python"; a paragraph ending "::" gives "" only when a blank line and a line
    indented past it follow, as reST requires (a man page's ``-k::`` option or "that is ::" in a
    sentence opens nothing); None for other lines."""
    match = _CODE_DIRECTIVE.match(bare)
    if match is not None:
        return match.group(1)
    if not bare.endswith("::") or bare.startswith(".."):
        return None
    nxt = at + 1
    while nxt < len(lines) and not lines[nxt].strip():
        nxt += 1
    opens = nxt > at + 1 and nxt < len(lines) and _indent(lines[nxt]) > _indent(lines[at])
    return "" if opens else None


def _before_literal(bare: str) -> str:
    """What a line opening a literal block says (reST): "Example::" reads "Example:", "Example ::"
    reads "Example", "::" and a directive nothing."""
    if bare.startswith(".."):
        return ""
    return bare[:-1] if bare[-3:-2] not in " " else bare[:-2].rstrip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _options_out(lines: list[str]) -> list[str]:
    """A directive's body without its option lines (``:linenos:``, ``:caption: x``) before it."""
    at = 0
    while at < len(lines) and lines[at].strip().startswith(":"):
        at += 1
    return lines[at:]


@dataclass
class _Reader:
    """``units``' state outside code blocks: the units so far, the paragraph being read and its
    kind, and a definition's term line ("-i, --ignore-case") waiting for its text."""

    wrapped: bool
    out: list[Unit] = field(default_factory=list)
    para: list[str] = field(default_factory=list)
    kind: UnitKind = "prose"
    term: list[str] = field(default_factory=list)

    def flush(self) -> None:
        if not self.para:
            return
        para = self.para
        if (
            self.wrapped
            and self.kind == "prose"
            and len(para) == 1
            and para[0][:1] == "-"
            and len(para[0]) <= 80
        ):
            if self.term:
                self.out.extend(_paragraph(self.term.pop(), self.kind))
            self.term.append(para.pop())
            return
        self.out.extend(_paragraph(" ".join([*self.term, *para]), self.kind))
        self.term.clear()
        para.clear()

    def code(self, lang: str, lines: list[str]) -> None:
        """A code block's lines, as one unit (none when they hold no code)."""
        made = _code(lang, lines)
        self.out.extend([made] if made else [])

    def line(self, line: str, bare: str) -> None:
        """One line outside a code block."""
        if bare.startswith("{*") and bare.endswith("*}"):
            return  # a docs include ("{* ../docs_src/app.py *}"): nothing to read here
        title = directive(line) if bare else None
        if title is not None:
            self.flush()
            if title:
                self.out.append(Unit(clean(title), "heading"))
            return
        block = _block_kind(bare) if bare else None
        if self.wrapped and block is None and bare and not self.para and _subsection(line, bare):
            block = "heading"
        if block == "heading":  # a heading is one line: the next one starts a paragraph
            self.flush()
            self.out.extend(_paragraph(bare, "heading"))
            self.kind = "prose"
            return
        if not self.wrapped or not bare or block:
            self.flush()
            self.kind = block or "prose"
        if bare:
            self.para.append(bare)

    def finish(self) -> list[Unit]:
        self.flush()
        self.out.extend(_paragraph(self.term.pop(), "prose") if self.term else [])
        return self.out


def _paragraph(text: str, kind: UnitKind) -> list[Unit]:
    if kind == "row":
        cells = [clean(c) for c in text.strip("|").split("|")]
        if all(not c.strip(" -:") for c in cells):
            return []  # the |---|---| line under a table's head
        return [Unit(_clip(" | ".join(c for c in cells if c)), "row")] if any(cells) else []
    if kind == "heading":
        return [Unit(_clip(clean(text.lstrip("#").strip())), "heading")] if text.strip("# ") else []
    out: list[Unit] = []
    for i, sentence in enumerate(_split_line(clean(text))):
        out.append(Unit(sentence, kind if i == 0 else "prose"))
    return out


CLOSERS = "*_`)\"'”’」』"


def _split_line(line: str) -> list[str]:
    out: list[str] = []
    start = 0
    n = len(line)
    code = False  # inside `inline code`, where "?" or "." ends nothing
    for i, ch in enumerate(line):
        if ch == "`":
            code = not code
        if ch not in ENDS or i < start or code:
            continue
        if ch == "." and line[start:i].strip().isdigit() and i - start <= 4:
            continue  # a numbered item's "1." ends no sentence: the item goes on after it
        j = i + 1
        while j < n and line[j] in CLOSERS:  # "**Crash-safe.**" ends after its closing marks
            j += 1
        if j == n or line[j].isspace():
            out.append(line[start:j])
            start = j
    out.append(line[start:])
    return [piece for s in out if len(s.strip()) > 1 for piece in _pieces(_unbullet(s.strip(" \t#*>|")))]


def _pieces(sentence: str) -> list[str]:
    """``sentence`` in pieces of at most ``MAX_SENTENCE`` characters, cut at words from its end: a
    run that long is text with no sentence end (a PDF's table, a list of names) before the sentence
    whose end closed it, which a cut at ``MAX_SENTENCE`` lost (fontconfig's manual: its property
    table ran on into "Fontconfig performs matching by measuring the distance ...")."""
    pieces: list[str] = []
    rest = sentence
    while len(rest) > MAX_SENTENCE:
        cut = rest.find(" ", len(rest) - MAX_SENTENCE)
        cut = len(rest) - MAX_SENTENCE if cut < 0 else cut
        pieces.append(rest[cut:].strip())
        rest = rest[:cut].rstrip()
    return [p for p in [rest, *reversed(pieces)] if p]


def _unbullet(sentence: str) -> str:
    """A list item's text without its bullet ("- ", "* ", "+ "); "-i, --ignore-case" stays."""
    return sentence[2:].lstrip() if sentence[:2] in ("- ", "* ", "+ ") else sentence


def _clip(sentence: str) -> str:
    if len(sentence) <= MAX_SENTENCE:
        return sentence
    return sentence[:MAX_SENTENCE].rsplit(" ", 1)[0] + "…"


def _content(terms: Sequence[str]) -> set[str]:
    return {t for t in terms if t not in STOP and len(t) > 1}


def procedural(question: str) -> bool:
    """A "how do I ..." question, which a command or a code block can answer."""
    q = " ".join(question.lower().split())
    return q.startswith(("how do i", "how can i", "how to", "how should i", "how do you")) or "어떻게" in q


def support(sentence: str, passage: str) -> float:
    """The share of the sentence's content words found in the passage (0-1)."""
    words = _content(analyze(sentence))
    if not words:
        return 0.0
    return len(words & set(analyze(passage))) / len(words)


#: ``[7]``, ``[1, 2]``, ``[3-4]``: the shape of a citation marker, in text quoted from a source
_MARKER = re.compile(r"\[(\d{1,6}(?:\s{0,3}[,\-–]\s{0,3}\d{1,6}){0,20})\]")


def unmarked(sentence: str) -> str:
    """``sentence`` with every ``[n]``-shaped text outside inline code turned into ``(n)``: text
    from a document can never pass for one of the answer's own citation markers."""
    if "[" not in sentence:
        return sentence
    pieces = CODE_SPAN.split(sentence)
    return "".join(p if i % 2 else _MARKER.sub(r"(\1)", p) for i, p in enumerate(pieces))


def assemble(
    parts: Sequence[tuple[str, Sequence[int]]], hits: Sequence[RankedHit]
) -> tuple[str, list[Citation], list[RankedHit]]:
    """The answer text from (unit, hit indexes) parts: ``[n]`` numbered by first citation; a code
    block keeps its lines, on lines of its own (fenced: ``[0]`` in code is code, not a marker), its
    markers on the line after its closing fence;
    any other ``[n]`` a source wrote is neutralised (``unmarked``)."""
    numbers: dict[int, int] = {}
    cited: list[RankedHit] = []
    text = ""
    citations: list[Citation] = []
    after_block = False
    for sentence, indexes in parts:
        block = sentence.startswith("```")
        clean = printable(sentence).strip() if block else unmarked(strip_controls(sentence).strip())
        markers = []
        for index in indexes:
            if index not in numbers:
                numbers[index] = len(cited) + 1
                cited.append(hits[index])
            markers.append(numbers[index])
        gap = "\n" if block or after_block else " "
        after_block = block
        start = len(text) + (len(gap) if text else 0)
        text = f"{text}{gap}{clean}" if text else clean
        # A closing fence must stand alone on its line (Markdown): a block's markers follow on the next.
        text += ("\n" if block and markers else "") + "".join(f"[{n}]" for n in markers)
        for n in markers:
            where = cited[n - 1].hit.location
            citations.append(Citation(marker=n, sentence=clean, start=start, end=len(text), location=where))
    return text, citations, cited
