"""DuckDuckGo, keyless, through its HTML endpoint (html.duckduckgo.com).

The HTML endpoint answers a bot challenge ("anomaly" page, or HTTP 202) when it suspects
automation: that is ``Blocked``, never zero results.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import lxml.html
from pydantic_settings import BaseSettings

from sourcewise.errors import Blocked, ParseError
from sourcewise.models import RawResult
from sourcewise.web.providers.base import (
    HttpRequest,
    HttpResponse,
    Provider,
    check_status,
    options_config,
    received,
)
from sourcewise.web.rank import published_from

NAME = "duckduckgo"
_CHALLENGE = ("anomaly-modal", "challenge-form", "anomaly.js", "/anomaly?")


def _has_class(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


class DuckDuckGoOptions(BaseSettings):
    """``[providers.duckduckgo]``: the endpoint (for a proxy or a test server)."""

    model_config = options_config(NAME)

    url: str = "https://html.duckduckgo.com/html/"


def build(query: str, max_results: int, options: DuckDuckGoOptions) -> HttpRequest:
    return HttpRequest("POST", options.url, data={"q": query, "b": "", "kl": ""})


def unwrap(href: str) -> str:
    """DuckDuckGo wraps result links as ``//duckduckgo.com/l/?uddg=<url>``; return the target."""
    parts = urlsplit(href if "://" in href else "https:" + href if href.startswith("//") else href)
    if parts.path == "/l/" and "uddg" in (query := parse_qs(parts.query)):
        return query["uddg"][0]
    return href


def parse(response: HttpResponse) -> list[RawResult]:
    text = response.text
    if response.status == 202 or any(marker in text for marker in _CHALLENGE):
        raise Blocked(NAME, "DuckDuckGo answered with a bot challenge (CAPTCHA) instead of results")
    check_status(NAME, response)
    try:
        doc = lxml.html.fromstring(text)
    except (ValueError, lxml.etree.ParserError) as exc:
        raise ParseError(NAME, "the page is not HTML") from exc
    out: list[RawResult] = []
    for node in doc.xpath(f"//div[{_has_class('result')} and not({_has_class('result--ad')})]"):
        links = node.xpath(f".//a[{_has_class('result__a')}]")
        if not links:
            continue
        snippet = node.xpath(f".//*[{_has_class('result__snippet')}]")
        stamps = node.xpath(f".//div[{_has_class('result__extras__url')}]/span/text()")
        dates = [d for d in (published_from(s, received(response)) for s in stamps) if d is not None]
        out.append(
            RawResult(
                title=links[0].text_content(),
                url=unwrap(links[0].get("href", "")),
                snippet=snippet[0].text_content() if snippet else "",
                provider=NAME,
                position=len(out) + 1,
                published=dates[0] if dates else None,
            )
        )
    if not out and not doc.xpath(f"//*[@id='links' or {_has_class('no-results')}]"):
        raise ParseError(NAME, "the page has neither results nor a 'no results' notice")
    return out


PROVIDER = Provider(
    name=NAME,
    summary="DuckDuckGo HTML results; no key needed",
    configured=lambda options: (True, "keyless"),
    build=build,
    parse=parse,
    max_per_request=30,
    options=DuckDuckGoOptions,
)
