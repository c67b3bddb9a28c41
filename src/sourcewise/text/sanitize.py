"""Text from outside (files, exports) loses its control characters before a terminal sees it."""

from __future__ import annotations

import unicodedata

__all__ = ["strip_controls", "utf8"]


def utf8(text: str) -> str:
    """``text`` as UTF-8 can hold it: a lone surrogate becomes ``?``. RE2 and SQLite read UTF-8,
    and outside text (a file name, a hostile snippet) can carry one. ASCII text (known without
    reading it) holds none."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def strip_controls(text: str, keep: str = "") -> str:
    """``text`` without control, format-override and private-use characters (escape sequences,
    bidi overrides), except those in ``keep`` (e.g. ``"\\n\\t"`` for multi-line text)."""
    if text.isascii():  # the usual case, at C speed: ASCII's only such characters are its controls
        return text.translate({c: None for c in _ASCII_CONTROLS if chr(c) not in keep})
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
_ASCII_CONTROLS = (*range(32), 127)
