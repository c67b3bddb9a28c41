"""Markup out of text a user reads: what Markdown, reST, MkDocs, Sphinx, MyST, HTML and PDF text
extraction leave in a sentence.

``clean(text)`` is for one unit of prose (a sentence, a list item, a table row, a title):

- Markdown escapes (``default\\_transaction``), links (``[text](url)`` -> ``text``), images,
  emphasis marks (``**bold**``), attribute lists (``{ #anchor }``, ``{: .class }``);
- reST and MyST roles (``:class:`httpx.Client``` -> ``httpx.Client``, ``{ref}`text <t>``` -> ``text``);
- MkDocs, Sphinx and MyST admonition openers (``!!! note "Title"``, ``/// tip``, ``.. note::``,
  ``:::{tip}``)
  and directive lines (``.. code-block:: python``);
- HTML comments and the tags of documentation (``<abbr title=..>HTTP</abbr>`` -> ``HTTP``);
  other ``<...>`` stays, as ``Vec<T>`` is text;
- PDF ligatures (NFKC) and words hyphenated across a line break (``dis-\\ntributed``).

``dehyphenate`` joins hyphenated line breaks of extracted PDF text before it is split.
Every pattern runs on RE2 (linear time in the text).
"""

from __future__ import annotations

import unicodedata
from typing import Any

import re2  # type: ignore[import-untyped]

from .sanitize import utf8

__all__ = ["clean", "dehyphenate", "directive"]

_ESCAPE = re2.compile(r"\\([\\`*_{}\[\]()#+.!<>|~-])")
_IMAGE = re2.compile(r"!\[([^\]\n]{0,300})\]\([^)\n]{0,500}\)")
_LINK = re2.compile(r"\[([^\]\n]{1,300})\]\([^)\n]{0,500}\)")
_ROLE = re2.compile(
    r"(?::[\w.+-]+)+:`([^`<\n]*?)(?:\s*<[^`>\n]*>)?`|\{[\w.+-]+\}`([^`<\n]*?)(?:\s*<[^`>\n]*>)?`"
)
_ATTRS = re2.compile(r"\s*\{:?\s*[#.][^{}\n]{0,200}\}")
_TAGS = re2.compile(
    r"(?i)</?(?:abbr|span|div|a|b|i|em|strong|small|sup|sub|kbd|mark|u|s|br|p|img|font|details|summary|"
    r"section|figure|figcaption|center|code|pre|ul|ol|li|dl|dt|dd|table|thead|tbody|tr|td|th|hr|dfn|"
    r"h[1-6]|listing)(?:\s[^<>\n]{0,500})?/?>"
)
_EMPHASIS = re2.compile(r"(\*\*|__)(\S[^*\n]{0,500}?)(\*\*|__)")
_ITALIC = re2.compile(r"(^|[\s(\"'])[*_]([^*_\s][^*_\n]{0,300}?)[*_]")
_DIRECTIVE = re2.compile(
    r"^\s*(?:!!!|\?\?\?\+?|\.\. [\w:-]+::|:::+\s*\{?[\w-]*\}?|```+\s*\{[\w-]+\}|///)(.*)$"
)
_HYPHEN = re2.compile("([a-z])[-\u2010]\n[ \t]*([a-z])")
_SPACES = re2.compile(r"[ \t]{2,}")
_COMMENT = re2.compile(r"<!--[^>]{0,500}-->")


def directive(line: str) -> str | None:
    """For an admonition or directive line, its title (``!!! note "Read this"`` -> ``Read this``,
    possibly ``""``); ``None`` for any other line."""
    match = _DIRECTIVE.match(utf8(line))
    if match is None:
        return None
    rest = match.group(1).strip()
    if line.lstrip().startswith(("!!!", "???")):
        _kind, _, title = rest.partition(" ")
        return title.strip().strip("\"'") if title else ""
    return ""


def _role(match: Any) -> str:
    return str(match.group(1) if match.group(1) is not None else match.group(2) or "")


def clean(text: str) -> str:
    """``text`` as a reader should see it: markup out, ligatures folded, spaces single."""
    if not text:
        return text
    text = unicodedata.normalize("NFKC", utf8(text))
    text = _HYPHEN.sub(r"\1\2", text)
    text = _IMAGE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _ROLE.sub(_role, text)
    text = _ATTRS.sub("", text)
    text = _TAGS.sub("", _COMMENT.sub("", text))
    text = _ITALIC.sub(r"\1\2", _EMPHASIS.sub(r"\2", text))
    text = _ESCAPE.sub(r"\1", text)
    return str(_SPACES.sub(" ", text)).strip()


def dehyphenate(text: str) -> str:
    """Words a PDF hyphenated across lines joined (``distri-\\nbuted`` -> ``distributed``)."""
    return str(_HYPHEN.sub(r"\1\2", utf8(text)))
