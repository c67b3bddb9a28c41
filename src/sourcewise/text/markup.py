"""Markup out of text a user reads: what Markdown, reST, MkDocs, Sphinx, MyST, HTML and PDF text
extraction leave in a sentence.

``clean(text)`` is for one unit of prose (a sentence, a list item, a table row, a title):

- Markdown escapes (``default\\_transaction``), links (``[text](url)`` -> ``text``), images,
  emphasis marks (``**bold**``), attribute lists (``{ #anchor }``, ``{: .class }``);
- reST and MyST roles (``:class:`httpx.Client``` -> ``httpx.Client``, ``{ref}`text <t>``` -> ``text``);
- MkDocs, Sphinx and MyST admonition openers (``!!! note "Title"``, ``/// tip``, ``.. note::``,
  ``:::{tip}``)
  and directive lines (``.. code-block:: python``);
- HTML comments, ``<style>``/``<script>`` elements, entities (``&vert;`` -> ``|``) and the tags of
  documentation (``<abbr title=..>HTTP</abbr>`` -> ``HTTP``); other ``<...>`` stays, as ``Vec<T>``
  is text;
- PDF ligatures (NFKC) and words hyphenated across a line break (``dis-\\ntributed``).

``dehyphenate`` joins hyphenated line breaks of extracted PDF text before it is split.
Inline code (```{:?}```, ```a\\_b```) is code: nothing in it is touched. Every text a user reads
(answers, titles, heading paths, snippets) passes here. Every pattern runs on RE2 (linear time in
the text), each only where the characters it needs are (the checks are substrings, byte classes or
patterns of single characters on Python's engine, linear too); italic marks are taken out by one
pass over the text's "*", "_" and newlines, as the RE2 pattern the tests compare it with would.
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Any

import re2  # type: ignore[import-untyped]

from sourcewise.text.sanitize import utf8

__all__ = ["CODE_SPAN", "DIRECTIVE_STARTS", "clean", "dehyphenate", "directive"]

_IMAGE = re2.compile(r"!\[([^\]\n]{0,300})\]\([^)\n]{0,500}\)|(?i)<img\s[^<>]*>")
_LINK = re2.compile(r"\[([^\]\n]{1,300})\]\([^)\n]{0,500}\)")
# reST and MyST roles: ":class:" or "{ref}" right before a code span, whose "<target>" goes too.
_ROLE_NAME = re2.compile(r"(?:(?::[\w.+-]+)+:|\{[\w.+-]+\})$")
_ROLE_TARGET = re2.compile(r"\s*<[^`>\n]*>$")
#: an inline code span (its backticks too), the one definition; RE2 is linear whatever the length
CODE_SPAN = re2.compile(r"(`[^`\n]*`)")
_ATTRS = re2.compile(r"\s*\{:?\s*[#.][^{}\n]{0,200}\}")
# What ``_ATTRS`` needs to match, found by Python's engine (a class repeated, then one character:
# linear) before a call into RE2's binding (microseconds of Python each) on every "{" of code or
# JSON: Python's ``\s`` holds RE2's.
_ATTRS_START = re.compile(r"\{:?\s*[#.]")
_TAGS = re2.compile(
    r"(?i)</?(?:abbr|span|div|a|b|i|em|strong|small|sup|sub|kbd|mark|u|s|br|p|img|font|details|summary|"
    r"section|figure|figcaption|center|code|pre|ul|ol|li|dl|dt|dd|table|thead|tbody|tr|td|th|hr|dfn|"
    r"h[1-6]|listing|blockquote|button|cite|q|nav|aside|header|footer|article|caption|var|samp|tt|ins|"
    r"del|strike|big|label|picture|source|video|audio|iframe)(?:\s[^<>]*)?/?>"
)
# What a <style> or <script> element holds is no text for a reader.
_ELEMENTS = re2.compile(r"(?is)<(style|script)(?:\s[^<>]*)?>[^<]*(?:</(?:style|script)\s*>?)?")
_EMPHASIS = re2.compile(r"(^|[^\w*])(\*\*|__)(\S[^*\n]{0,500}?)(\*\*|__)($|[^\w*])")
# Italic marks (``_word_``, ``*a few words*``) are what RE2's
# ``(^|[\s(\"'])[*_]([^*_\s][^*_\n]{0,300}?)[*_]($|[^\w*])`` -> ``\1\2\3`` takes out, made by
# ``_italic_sub`` in one pass over the marks (the test holds that pattern and compares): through
# RE2's Python binding each match cost 20-30 us (a call ~100 us on a line of Vim help's ``*tags*``).
_ITALIC_STOPS = re.compile(r"[*_\n]")  # one class: a linear scan
_ITALIC_OPEN = frozenset("\t\n\f\r (\"'")  # what may stand before a mark (RE2's \s, "(", quotes)
_ITALIC_NOT_FIRST = frozenset("*_\t\n\f\r ")  # what italic text cannot start with
_ITALIC_NOT_AFTER = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_*")
_ITALIC_MAX = 300  # characters after the first one
_DIRECTIVE = re2.compile(
    r"^\s*(?:!!!|\?\?\?\+?|\.\. [\w:-]+::|:::+\s*\{?[\w-]*\}?|```+\s*\{[\w-]+\}|////?)(.*)$"
)
# What ``_ITALIC`` needs in a text to match, looked for without a call into RE2: "*" or "_" at the
# start or after one of RE2's ``\s`` (``[\t\n\f\r ]``), "(", '"' or "'": the text's UTF-8 bytes as
# classes ("o" opens, "m" marks, "x" the rest; a byte of a longer character is never an ASCII one)
# and one search, C loops both (3 us on a snippet's 800 characters, where a pattern with an
# alternation at every position took 30).
_ITALIC_CLASSES = bytes(
    ord("o") if chr(c) in "\t\n\f\r (\"'" else ord("m") if chr(c) in "*_" else ord("x") for c in range(256)
)
# Markdown escapes: a backslash and one character, a pattern of single characters that Python's
# engine runs in one pass (linear, nothing to backtrack), its ``sub`` in C (RE2's binding spent
# 20-30 us of Python per match, and a line of a man page holds dozens).
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+.!<>|~-])")
#: what an admonition or directive line starts with (after spaces): ``directive`` reads only those
DIRECTIVE_STARTS = ("!!!", "???", ".. ", ":::", "```", "///")
_HYPHEN = re2.compile("([a-z])[-\u2010]\n[ \t]*([a-z])")
# Runs of spaces on Python's engine: one class repeated, nothing after it to backtrack into (linear),
# and its ``sub`` runs in C, where RE2's binding spent 20-30 us of Python per match (a line of a
# Vim help table holds dozens).
_SPACES = re.compile(r"[ \t]{2,}")
_COMMENT = re2.compile(r"<!--[^>]{0,500}-->")
_ENTITY = re2.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def directive(line: str) -> str | None:
    """For an admonition or directive line, its title (``!!! note "Read this"`` -> ``Read this``,
    possibly ``""``); ``None`` for any other line."""
    if not line.lstrip().startswith(DIRECTIVE_STARTS):  # what the pattern needs after spaces
        return None
    match = _DIRECTIVE.match(utf8(line))
    if match is None:
        return None
    rest = match.group(1).strip()
    if line.lstrip().startswith(("!!!", "???")):
        _kind, _, title = rest.partition(" ")
        return title.strip().strip("\"'") if title else ""
    return ""


def clean(text: str) -> str:
    """``text`` as a reader should see it: markup out, ligatures folded, spaces single. What is
    inside inline code (```{:?}```, ```__init__```, ```<T>```) is code and stays as written."""
    if not text:
        return text
    if not text.isascii():  # known without reading the text; ASCII is NFKC already
        text = unicodedata.normalize("NFKC", utf8(text))
    # Each pattern only where the characters it needs are (a call into RE2 costs microseconds, and
    # most titles and lines hold no markup at all).
    if "\n" in text:
        text = _HYPHEN.sub(r"\1\2", text)
    if "![" in text or "<" in text:
        text = _IMAGE.sub("", text)
    if "](" in text:
        text = _LINK.sub(r"\1", text)
    if "`" not in text:
        return _prose(text).strip()
    pieces = CODE_SPAN.split(text)
    for i in range(1, len(pieces), 2):  # a role is a prose suffix and the code span after it
        role = _ROLE_NAME.search(pieces[i - 1])
        if role is not None:
            pieces[i - 1] = pieces[i - 1][: role.start()]
            pieces[i] = _ROLE_TARGET.sub("", pieces[i][1:-1])
    return "".join(p if i % 2 else _prose(p) for i, p in enumerate(pieces)).strip()


def _may_open_italic(text: str) -> bool:
    classes = text.encode("utf-8", "replace").translate(_ITALIC_CLASSES)
    return classes.startswith(b"m") or b"om" in classes


def _italic_sub(text: str) -> str:
    """The italic marks out (see ``_ITALIC_STOPS``): matches found left to right, each after the
    last, as the pattern's are. Italic text holds no "*", "_" or newline, so a mark's match can
    only close at the next stop."""
    stops = [m.start() for m in _ITALIC_STOPS.finditer(text)]
    out: list[str] = []
    pos, n = 0, len(text)
    for i, m in enumerate(stops[:-1]):
        if text[m] == "\n":
            continue
        if m == 0:
            opener, start = "", 0
        elif m - 1 >= pos and text[m - 1] in _ITALIC_OPEN:
            opener, start = text[m - 1], m - 1
        else:
            continue
        close = stops[i + 1]
        if text[m + 1] in _ITALIC_NOT_FIRST or text[close] == "\n" or close - m - 2 > _ITALIC_MAX:
            continue
        if close + 1 == n:
            after, end = "", n
        elif text[close + 1] not in _ITALIC_NOT_AFTER:
            after, end = text[close + 1], close + 2
        else:
            continue
        out += (text[pos:start], opener, text[m + 1 : close], after)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _prose(text: str) -> str:
    """Markup out of text outside inline code."""
    if "<" in text:
        if "<!--" in text:
            text = _COMMENT.sub("", text)
        if "<s" in text or "<S" in text or "<\u017f" in text:  # RE2's (?i) folds "ſ" to "s"
            text = _ELEMENTS.sub("", text)
        text = _TAGS.sub("", text)
    if "{" in text and _ATTRS_START.search(text):
        text = _ATTRS.sub("", text)
    if "*" in text or "_" in text:
        # Twice: a match takes the character after it, which the next one may need before it (a
        # pass that changed nothing leaves nothing for the second).
        for _ in range(2):
            before = text
            if "**" in text or "__" in text:
                text = _EMPHASIS.sub(r"\1\3\5", text)
            if _may_open_italic(text):
                text = _italic_sub(text)
            if text == before:
                break
    if "\\" in text:
        text = _ESCAPE.sub(r"\1", text)
    if "&" in text:
        text = _ENTITY.sub(_entity, text)
    return _SPACES.sub(" ", text) if "  " in text or "\t" in text else text


def _entity(match: Any) -> str:
    return html.unescape(str(match.group()))


def dehyphenate(text: str) -> str:
    """Words a PDF hyphenated across lines joined (``distri-\\nbuted`` -> ``distributed``)."""
    return str(_HYPHEN.sub(r"\1\2", utf8(text)))
