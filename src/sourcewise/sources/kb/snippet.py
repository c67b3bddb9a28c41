"""A knowledge-base hit's snippet: up to 200 characters from the first line holding a query term,
as a reader should see them (admonition and directive lines out, markup cleaned: ``text.markup``)."""

from __future__ import annotations

from sourcewise.sources.kb import terms as kbterms
from sourcewise.text.markup import DIRECTIVE_STARTS as _STARTS
from sourcewise.text.markup import clean, directive

__all__ = ["SNIPPET", "snippet"]

SNIPPET = 200
_WINDOW = 4  # x size: markup takes room, so more than is shown is cleaned


def snippet(text: str, wanted: kbterms.Wanted, size: int = SNIPPET) -> str:
    # Every hit of every query makes one. The snippet starts at the first shown line holding a
    # query term (one of ``wanted.terms``; the first line when none does, as when only the title or
    # a heading matched); a shown line is one that is not blank and no admonition or directive.
    # The lines from there are stripped and kept in C loops (``map``, a comprehension that calls
    # ``directive`` only on a line starting as one may): a chunk is at most a few thousand
    # characters, and a Python loop per line that stopped at the window's end cost more.
    lines = text.splitlines()
    start = 0
    if len(lines) > 1:
        start = next((i for i in kbterms.lines_holding(lines, wanted) if _shown(lines[i].strip())), 0)
    # ``room`` characters of the shown lines joined: markup takes room, so more than is shown is cleaned
    shown = [s for s in map(str.strip, lines[start:]) if s and (not s.startswith(_STARTS) or _shown(s))]
    joined = clean(" ".join(shown)[: _WINDOW * size])
    return joined if len(joined) <= size else joined[: size - 1].rsplit(" ", 1)[0] + "…"


def _shown(line: str) -> bool:
    """Whether a stripped, non-blank line is shown (no admonition or directive)."""
    return directive(line) is None
