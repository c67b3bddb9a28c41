"""FTS5 match expressions from a parsed query, shared by the SQLite-backed sources."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.analyze import analyze, fts_query

__all__ = ["fts_match"]


def fts_match(terms: Sequence[str], phrases: Sequence[str] = ()) -> str:
    """Any of ``terms`` and every phrase (a quoted FTS5 phrase of analyzed terms), or ``""``.

    Every term is quoted, so nothing typed by a user is read as FTS5 syntax."""
    any_term = fts_query(" ".join(terms))
    parts = [any_term] if any_term else []
    for phrase in phrases:
        words = analyze(phrase)
        if words:
            parts.append('"' + " ".join(w.replace('"', '""') for w in words) + '"')
    return " AND ".join(f"({p})" for p in parts)
