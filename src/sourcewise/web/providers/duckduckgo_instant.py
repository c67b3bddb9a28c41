"""DuckDuckGo's Instant Answer API (``format=json``), seed 001's fallback when search fails.

It is not a web search: it answers with an abstract (usually Wikipedia's), the topic's official
site (``Results``) and related topics (``RelatedTopics``, some grouped under a ``Name``). Those
become results, in that order. An answer with none of them is zero results, not an error.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic_settings import BaseSettings

from sourcewise.errors import ParseError
from sourcewise.models import RawResult
from sourcewise.web.providers.base import (
    HttpRequest,
    HttpResponse,
    Provider,
    check_status,
    json_body,
    options_config,
)

__all__ = ["PROVIDER", "InstantOptions", "build", "parse"]

NAME = "duckduckgo_instant"
MAX_TOPICS = 200
# The anchor text of a topic's Result HTML: '<a href="...">Title</a>rest'. Linear: no part can
# run past the next '<', so an attempt that fails stops there (``[^>]*`` ran to the end: quadratic).
_ANCHOR = re.compile(r"<a [^<>]*>([^<]*)</a>")


class InstantOptions(BaseSettings):
    """``[providers.duckduckgo_instant]``: the endpoint (for a proxy or a test server)."""

    model_config = options_config(NAME)

    url: str = "https://api.duckduckgo.com/"


def build(query: str, max_results: int, options: InstantOptions) -> HttpRequest:
    return HttpRequest(
        "GET",
        options.url,
        params={"q": query, "format": "json", "no_html": 1, "skip_disambig": 1, "no_redirect": 1},
    )


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ParseError(NAME, f"'{key}' is not text")
    return value


def _topic(item: Any) -> tuple[str, str, str]:
    """(title, url, snippet) of one topic or result entry."""
    if not isinstance(item, dict):
        raise ParseError(NAME, "a topic is not an object")
    url, text, html = _text(item, "FirstURL"), _text(item, "Text"), _text(item, "Result")
    anchor = _ANCHOR.search(html)
    title = anchor.group(1).strip() if anchor else ""
    snippet = text[len(title) :].lstrip(" -–—") if title and text.startswith(title) else text
    return title or text, url, snippet


def _topics(items: Any, what: str) -> list[tuple[str, str, str]]:
    if items is None or items == "":
        return []
    if not isinstance(items, list):
        raise ParseError(NAME, f"'{what}' is not a list")
    out: list[tuple[str, str, str]] = []
    for item in items[:MAX_TOPICS]:
        if isinstance(item, dict) and "Topics" in item:  # a named group of topics, one level deep
            group = item["Topics"]
            if not isinstance(group, list):
                raise ParseError(NAME, "a topic group's 'Topics' is not a list")
            out.extend(_topic(sub) for sub in group[:MAX_TOPICS])
        else:
            out.append(_topic(item))
    return out


def parse(response: HttpResponse) -> list[RawResult]:
    check_status(NAME, response)
    body = json_body(NAME, response)
    if not isinstance(body, dict):
        raise ParseError(NAME, "the JSON is not an object")
    found: list[tuple[str, str, str]] = []
    abstract_url = _text(body, "AbstractURL")
    if abstract_url:
        title = _text(body, "Heading") or _text(body, "AbstractSource")
        found.append((title, abstract_url, _text(body, "AbstractText") or _text(body, "Abstract")))
    definition_url = _text(body, "DefinitionURL")
    if definition_url and _text(body, "Definition"):
        found.append((_text(body, "DefinitionSource"), definition_url, _text(body, "Definition")))
    found += _topics(body.get("Results"), "Results")
    found += _topics(body.get("RelatedTopics"), "RelatedTopics")
    return [
        RawResult(title=title, url=url, snippet=snippet, provider=NAME, position=i)
        for i, (title, url, snippet) in enumerate(((t, u, s) for t, u, s in found if u), start=1)
    ]


PROVIDER = Provider(
    name=NAME,
    summary="DuckDuckGo Instant Answer API (abstract, official site, related topics); no key needed",
    configured=lambda options: (True, "keyless (instant answers only, not a full web search)"),
    build=build,
    parse=parse,
    max_per_request=50,
    options=InstantOptions,
)
