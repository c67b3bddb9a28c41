"""Text from outside (files, exports) loses its control characters before a terminal sees it.

A terminal reads a control character as the start of a sequence: ESC ``[31m`` colours, ESC
``]0;title`` BEL sets the window title. Removing ESC alone would leave ``[31m`` and ``]0;title``
as visible text, so every remover of controls first drops whole escape sequences
(``drop_escapes``), then the characters left."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["drop_escapes", "strip_controls", "utf8"]

# ECMA-48 sequences in their 7-bit form (ESC ...), whole; a sequence cut short by the end of the
# text is dropped as far as it goes. The 8-bit forms (U+0080-U+009F) go alone, as single controls:
# a terminal reading UTF-8 does not start a sequence at them, and mojibake holds them often (a
# curly quote read as Latin-1 is "â\x80\x9d"): taking the line after one as its string had
# deleted real text. Every class excludes what starts the next alternative and each tail is
# optional, so a failed match never backtracks: linear time.
_ESCAPES = re.compile(
    # CSI: parameter bytes, intermediate bytes, one final byte ("ESC [ 3 1 m", "ESC [ 2 J")
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    # OSC, DCS, SOS, PM, APC: a string up to BEL or ST (ESC \ or U+009C); an unended one up to
    # the end of its line
    r"|\x1b[\]PX^_][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
    # any other: intermediate bytes, one final byte ("ESC ( B", "ESC 7", "ESC c")
    r"|\x1b[ -/]*[0-~]?"
    # an 8-bit control, alone
    r"|[\x80-\x9f]"
)
_INTRODUCERS = frozenset(["\x1b", *map(chr, range(0x80, 0xA0))])


def drop_escapes(text: str) -> str:
    """``text`` without its terminal escape sequences (CSI, OSC and the other string and ESC
    sequences), each removed whole, and without 8-bit controls, each alone; other text, ``[31m``
    without an ESC included, unchanged."""
    if text.isascii() and "\x1b" not in text:  # the usual case, at C speed
        return text
    if _INTRODUCERS.isdisjoint(text):
        return text
    return _ESCAPES.sub("", text)


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
    bidi overrides), except those in ``keep`` (e.g. ``"\\n\\t"`` for multi-line text); escape
    sequences go whole (``drop_escapes``)."""
    text = drop_escapes(text)
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
