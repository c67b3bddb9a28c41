"""A knowledge-base hit's snippet: up to 200 characters from the first line holding a query term,
as a reader should see them (admonition and directive lines out, markup cleaned: ``text.markup``).

What a snippet cleans depends only on the chunk and the line it starts at, so whether cleaning
changes anything in any window a chunk can give is known when the chunk is indexed (``plain``):
the record keeps the answer (a flag: a record written before it has none, and its snippets are
cleaned as they were), and a query cleans only the chunks where it may change something: 94% of
the real 100k corpus' chunks need none, and cleaning them had been 7-9% of a query's time."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice

from sourcewise.sources.kb import terms as kbterms
from sourcewise.text.markup import DIRECTIVE_STARTS, clean, directive

__all__ = ["SNIPPET", "plain", "snippet"]

SNIPPET = 200
_WINDOW = 4  # x size: markup takes room, so more than is shown is cleaned
# What ``clean`` looks for in ASCII text (``"  "`` apart): a text with none of them it only strips.
_MARKUP = frozenset("\t\n<[]`{*_\\&")


def snippet(text: str, wanted: kbterms.Wanted, size: int = SNIPPET, *, plain: bool = False) -> str:
    """``plain``: what ``plain(text)`` said at indexing (no window of ``text`` needs cleaning)."""
    # Every hit of every query makes one: only the lines up to the start and the ones the window
    # holds are read. The snippet starts at the first shown line holding a query term (one of
    # ``wanted.terms``; the first line when none does, as when only the title or a heading
    # matched); a shown line is one that is not blank and no admonition or directive.
    lines = text.splitlines()
    start = 0
    if len(lines) > 1:
        start = next((i for i in kbterms.lines_holding(lines, wanted) if _shown(lines[i].strip())), 0)
    shown = (s for line in islice(lines, start, None) if (s := line.strip()) and _shown(s))
    window = _window(shown, _WINDOW * size)
    joined = window.strip() if plain and size == SNIPPET else clean(window)
    return joined if len(joined) <= size else joined[: size - 1].rsplit(" ", 1)[0] + "…"


def plain(text: str) -> bool:
    """Whether ``clean`` only strips every window ``snippet`` (at its default size) may cut from
    ``text``, one per shown line it may start at. ``False`` only costs the queries a cleaning: a
    text whose shown lines, cleaned together, change is not looked at further."""
    shown = [s for line in text.splitlines() if (s := line.strip()) and _shown(s)]
    whole = " ".join(shown)
    if _unmarked(whole):
        return True
    if clean(whole) != whole:
        return False
    # A window that is all of ``whole`` after a line's start (not cut at ``room``), in ASCII
    # without inline code, is cleaned as ``whole`` was: each of ``clean``'s patterns for such text
    # changes what it matches, a match in the window is one in ``whole``, where none was, and the
    # window's start reads as the space before it (every start pattern takes a space). Inline code
    # pairs its backticks from the window's start, and non-ASCII text is normalized: cleaned here.
    room = _WINDOW * SNIPPET
    suffixes = whole.isascii() and "`" not in whole
    left = len(whole)  # the length of the window from the line on, were it not cut
    for i, line in enumerate(shown):
        if not (suffixes and left <= room):
            w = _window(shown[i:], room)
            if not _unmarked(w) and clean(w) != w.strip():
                return False
        left -= len(line) + 1
    return True


def _unmarked(text: str) -> bool:
    """Whether ``clean`` would only strip ``text``: it is ASCII and holds none of what markup needs."""
    return text.isascii() and _MARKUP.isdisjoint(text) and "  " not in text


def _window(shown: Iterable[str], room: int) -> str:
    """The shown lines (stripped) joined, cut at ``room`` characters."""
    window: list[str] = []
    used = 0
    for s in shown:
        window.append(s)
        used += len(s) + 1
        if used > room:  # the joined window is at least ``room`` long
            break
    return " ".join(window)[:room]


def _shown(s: str) -> bool:
    """Whether a stripped line that is not blank is shown: no admonition or directive (``directive``
    only for a line that starts as one may: a call less for nearly every line)."""
    return not s.startswith(DIRECTIVE_STARTS) or directive(s) is None
