"""Text from outside (files, exports) loses its control characters before a terminal sees it."""

from __future__ import annotations

import unicodedata

__all__ = ["strip_controls"]


def strip_controls(text: str, keep: str = "") -> str:
    """``text`` without control, format-override and private-use characters (escape sequences,
    bidi overrides), except those in ``keep`` (e.g. ``"\\n\\t"`` for multi-line text)."""
    out = []
    for ch in text:
        if ch in keep:
            out.append(ch)
        elif unicodedata.category(ch) in _DROP:
            continue
        else:
            out.append(" " if ch.isspace() else ch)
    return "".join(out)


# Cc controls (ESC, BEL, CR ...), Cf format (bidi overrides, zero-width), Cs lone surrogates,
# Co private use, Cn unassigned; Zl/Zp line and paragraph separators.
_DROP = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
