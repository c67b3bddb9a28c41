"""Bytes to readable content: charset, bot-challenge detection, HTML (trafilatura), PDF (pypdf),
plain text and JSON. Pure: no I/O beyond the bytes it is given."""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from charset_normalizer import from_bytes
from w3lib.encoding import html_to_unicode, http_content_type_encoding, read_bom

from sourcewise.errors import ChallengePage, EmptyContent, UnsupportedContent

__all__ = ["Extracted", "decode", "extract", "is_challenge"]

_CHALLENGE = (
    "cf-chl-",
    "challenge-platform",
    "<title>just a moment...</title>",
    "attention required! | cloudflare",
    "cf-browser-verification",
    "anomaly-modal",
    "challenge-form",
    "/anomaly.js",
    "px-captcha",
    "_incapsula_resource",
    "captcha-delivery.com",
    "hcaptcha.com/1/api.js",
    "please verify you are a human",
    "unusual traffic from your computer network",
)
TEXT_TYPES = ("text/plain", "text/markdown", "text/csv", "text/x-markdown")


@dataclass(frozen=True)
class Extracted:
    text: str
    content_type: str
    title: str | None = None
    author: str | None = None
    published: str | None = None
    canonical: str | None = None


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name.strip().strip("\"'")).name
    except LookupError:
        return None


# Single-byte Western codecs: a declared one over bytes that are valid UTF-8 with non-ASCII
# characters is a mislabel (UTF-8 decoded as windows-1252 is mojibake: "cafÃ©", "â€™").
_SINGLE_BYTE = frozenset({"cp1252", "latin-1", "iso8859-1", "iso8859-15", "ascii"})


def decode(body: bytes, declared: str | None, *, html: bool = False) -> str:
    """Text from bytes by the WHATWG encoding rules (w3lib): a BOM, then the declared charset
    (the ``iso-8859-1`` label means windows-1252), then for HTML a ``<meta>`` charset, then
    detection. Mojibake is caught: UTF-8 labelled as a single-byte charset is read as UTF-8,
    and bytes that are not the UTF-8 they claim to be are detected instead."""
    header = f"text/html; charset={declared}" if declared else None
    if html:
        encoding, text = html_to_unicode(header, body, auto_detect_fun=_detect)
    else:
        bom, mark = read_bom(body)
        encoding = bom or http_content_type_encoding(header) or _detect(body) or "utf-8"
        text = body[len(mark or b"") :].decode(encoding, "replace")
    name = _codec(encoding)
    if name in _SINGLE_BYTE and not body.isascii():
        with contextlib.suppress(UnicodeDecodeError):
            return body.decode("utf-8").lstrip("\ufeff")
    if name == "utf-8" and "\ufffd" in text:
        try:
            return body.decode("utf-8-sig")
        except UnicodeDecodeError:
            best = from_bytes(body).best()
            return str(best) if best is not None else text
    return text.lstrip("\ufeff")


def _detect(body: bytes) -> str | None:
    """UTF-8 when the bytes are valid UTF-8, else charset-normalizer's guess."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        best = from_bytes(body[:200_000]).best()
        return best.encoding if best is not None else None
    return "utf-8"


def is_challenge(text: str, headers: Mapping[str, str] | None = None) -> bool:
    """A bot challenge or CAPTCHA page (Cloudflare, DuckDuckGo, PerimeterX, DataDome ...)."""
    if headers and headers.get("cf-mitigated", "").lower() == "challenge":
        return True
    head = text[:20000].lower()
    return any(marker in head for marker in _CHALLENGE)


def _media_type(content_type: str, body: bytes) -> str:
    media = content_type.split(";")[0].strip().lower()
    if media in ("", "application/octet-stream", "binary/octet-stream"):
        start = body[:512].lstrip().lower()
        if body.startswith(b"%PDF-"):
            return "application/pdf"
        if start.startswith((b"<!doctype html", b"<html")) or b"<body" in start:
            return "text/html"
        if start.startswith((b"{", b"[")):
            return "application/json"
        return "text/plain" if media == "" else media
    return media


def _charset(content_type: str) -> str | None:
    match = re.search(r"charset=([\w\"'-]+)", content_type, re.IGNORECASE)
    return match.group(1) if match else None


def extract(body: bytes, content_type: str, url: str, headers: Mapping[str, str] | None = None) -> Extracted:
    """Readable content of a response body; typed errors for challenges, binaries and empty pages."""
    media = _media_type(content_type, body)
    if media == "application/pdf":
        return _pdf(body, url)
    if media in ("text/html", "application/xhtml+xml"):
        return _html(decode(body, _charset(content_type), html=True), url, headers)
    if media == "application/json" or media.endswith("+json"):
        text = decode(body, _charset(content_type))
        with contextlib.suppress(ValueError):  # declared JSON that is not: pass it through as it is
            text = json.dumps(json.loads(text), ensure_ascii=False, indent=2)
        return _nonempty(Extracted(text=text, content_type=media), url)
    if media.startswith("text/") or media in ("application/xml", "text/xml"):
        text = decode(body, _charset(content_type))
        if is_challenge(text, headers):
            raise ChallengePage(url, "the server answered with a bot challenge instead of the page")
        return _nonempty(Extracted(text=text.strip(), content_type=media), url)
    raise UnsupportedContent(url, f"{media} is not text, HTML, JSON or PDF")


def _nonempty(result: Extracted, url: str) -> Extracted:
    if not result.text.strip():
        raise EmptyContent(url, "the page has no readable text")
    return result


def _html(text: str, url: str, headers: Mapping[str, str] | None) -> Extracted:
    if is_challenge(text, headers):
        raise ChallengePage(url, "the server answered with a bot challenge (CAPTCHA) instead of the page")
    import trafilatura  # imported here: heavy, and only pages need it

    # Parse once: metadata reads the tree, then extraction (which prunes it) runs on the same tree.
    tree = trafilatura.load_html(text)
    source = tree if tree is not None else text
    # Not htmldate's extensive search: its last resort hands date-like strings of the text to
    # dateparser, whose every locale loads on first use (~4 s of CPU in each process, for a page
    # such as Debian's nettle.html); on the 181 real pages of the extraction benchmark it found a
    # date for 2 that the meta tags, URL and markup did not (2026-11-28).
    meta = trafilatura.extract_metadata(source, default_url=url, extensive=False)
    main = trafilatura.extract(
        source,
        url=url,
        output_format="markdown",
        include_tables=True,
        include_formatting=True,
        include_comments=False,
        include_links=False,
        favor_recall=True,
    )
    if not main:
        main = trafilatura.html2txt(text) or ""
    return _nonempty(
        Extracted(
            text=main.strip(),
            content_type="text/html",
            title=getattr(meta, "title", None),
            author=getattr(meta, "author", None),
            published=getattr(meta, "date", None),
            canonical=getattr(meta, "url", None) if getattr(meta, "url", None) != url else None,
        ),
        url,
    )


def _pdf(body: bytes, url: str) -> Extracted:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(body))
        pages = [page.extract_text() or "" for page in reader.pages]
        title = reader.metadata.title if reader.metadata else None
    except (PdfReadError, ValueError, KeyError, OSError) as exc:
        raise UnsupportedContent(url, f"the PDF cannot be read ({exc})") from exc
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    return _nonempty(Extracted(text=text, content_type="application/pdf", title=title or None), url)
