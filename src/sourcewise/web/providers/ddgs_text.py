"""The ``ddgs`` metasearch library (seed 001's DuckDuckGo search), keyless, several backends.

ddgs is synchronous: it runs in a worker thread under the chain's deadline. Its own timeout is
set to the same number of seconds, so an abandoned thread ends soon after. Its exceptions become
ours: a rate limit suspends the provider, a timeout is transient, and "No results found." (which
ddgs also says when every backend refused) moves the chain on rather than passing for zero results.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from typing import Any

from pydantic_settings import BaseSettings

from sourcewise.errors import ParseError, ProviderError, RateLimited, TransientError
from sourcewise.models import RawResult
from sourcewise.net.reasons import brief, failure
from sourcewise.web.providers.base import (
    Provider,
    ProviderCall,
    ProviderOutput,
    no_parse,
    no_request,
    options_config,
)
from sourcewise.web.providers.duckduckgo import unwrap

__all__ = ["PROVIDER", "DdgsOptions", "error_for", "parse_items", "search_sync"]

NAME = "ddgs"


class DdgsOptions(BaseSettings):
    """``[providers.ddgs]``: the ddgs backends and region."""

    model_config = options_config(NAME)

    backend: str = "auto"  # ddgs backends, comma-separated, or auto
    region: str = "us-en"


def configured(options: DdgsOptions) -> tuple[bool, str]:
    try:
        import ddgs  # noqa: F401
    except ImportError:
        return False, "the ddgs library is not installed: pip install 'sourcewise[ddgs]'"
    return True, f"keyless (ddgs library, backend {options.backend})"


def search_sync(query: str, max_results: int, options: DdgsOptions, timeout: float) -> Any:
    """One ddgs text search, as ddgs returns it (checked by ``parse_items``)."""
    from ddgs import DDGS

    with DDGS(timeout=math.ceil(timeout)) as client:
        return client.text(query, region=options.region, max_results=max_results, backend=options.backend)


def error_for(exc: Exception) -> ProviderError:
    """Our typed error for an exception from ddgs (matched by class name: ddgs is optional)."""
    kind = type(exc).__name__
    message = str(exc) or kind  # read whole; what is shown is ``brief`` (no URL, no cut word)
    if kind == "RatelimitException" or "ratelimit" in message.lower() or "429" in message:
        return RateLimited(NAME, f"rate limited ({brief(message)})")
    if kind == "TimeoutException" or "timed out" in message.lower():
        return TransientError(NAME, failure(exc, fallback="timed out"))
    if "No results found" in message:
        return ProviderError(NAME, "no results: none found, or every backend refused (ddgs cannot tell)")
    if kind == "DDGSException":
        return TransientError(NAME, failure(exc, fallback="search failed"))
    return ProviderError(NAME, failure(exc, fallback="the ddgs library failed"))


def parse_items(items: Any) -> list[RawResult]:
    """``RawResult``s from ddgs's list of ``{title, href, body}``; ``ParseError`` if malformed."""
    if not isinstance(items, list):
        raise ParseError(NAME, f"expected a list of results, got {type(items).__name__}")
    out: list[RawResult] = []
    for item in items:
        if not isinstance(item, dict):
            raise ParseError(NAME, "a result is not an object")
        fields = [item.get(k) or "" for k in ("title", "href", "body")]
        if not all(isinstance(v, str) for v in fields):
            raise ParseError(NAME, "a result's title, href or body is not text")
        title, url, snippet = fields
        # DuckDuckGo's HTML backend hands back its own redirect links; keep the page they point at.
        with contextlib.suppress(ValueError):  # an unparseable link is judged later, by merge_results
            url = unwrap(url)
        out.append(RawResult(title=title, url=url, snippet=snippet, provider=NAME, position=len(out) + 1))
    return out


async def run(call: ProviderCall) -> ProviderOutput:
    try:
        async with asyncio.timeout(call.deadline):
            items = await asyncio.to_thread(
                search_sync, call.query, call.max_results, call.options, call.settings.timeout
            )
    except TimeoutError as exc:
        raise TransientError(NAME, f"no answer within {call.deadline:g} s") from exc
    except ImportError as exc:
        raise ProviderError(NAME, "the ddgs library is not installed") from exc
    except Exception as exc:  # ddgs raises its own classes, and lets some library errors through
        raise error_for(exc) from exc
    return ProviderOutput(parse_items(items)[: call.max_results])


PROVIDER = Provider(
    name=NAME,
    summary="ddgs metasearch library (DuckDuckGo, Bing, Brave, Mojeek ...); no key needed",
    configured=configured,
    build=no_request(NAME),
    parse=no_parse(NAME),
    max_per_request=30,
    run=run,
    options=DdgsOptions,
)
