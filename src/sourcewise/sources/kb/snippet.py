"""A knowledge-base hit's snippet: up to 200 characters from the first line holding a query term,
as a reader should see them (admonition and directive lines out, markup cleaned: ``text.markup``)."""

from __future__ import annotations

from itertools import islice

from sourcewise.sources.kb import terms as kbterms
from sourcewise.text.markup import DIRECTIVE_STARTS, clean, directive

__all__ = ["SNIPPET", "snippet"]

SNIPPET = 200
_WINDOW = 4  # x size: markup takes room, so more than is shown is cleaned


def snippet(text: str, wanted: kbterms.Wanted, size: int = SNIPPET) -> str:
    # Every hit of every query makes one: only the lines up to the start and the ones the window
    # holds are read. The snippet starts at the first shown line holding a query term (one of
    # ``wanted.terms``; the first line when none does, as when only the title or a heading
    # matched); a shown line is one that is not blank and no admonition or directive.
    lines = text.splitlines()
    start = 0
    if len(lines) > 1:
        start = next((i for i in kbterms.lines_holding(lines, wanted) if _shown(lines[i])), 0)
    window: list[str] = []
    used, room = 0, _WINDOW * size
    for line in islice(lines, start, None):
        if (s := line.strip()) and (not s.startswith(DIRECTIVE_STARTS) or directive(s) is None):
            window.append(s)
            used += len(s) + 1
            if used > room:  # the joined window is at least ``room`` long
                break
    joined = clean(" ".join(window)[:room])
    return joined if len(joined) <= size else joined[: size - 1].rsplit(" ", 1)[0] + "…"


def _shown(line: str) -> bool:
    # ``directive`` only for a line that starts as one may: a call less for nearly every line
    s = line.strip()
    return not s.startswith(DIRECTIVE_STARTS) or directive(s) is None
