"""SearXNG, a user's own metasearch instance, through its JSON API (``format=json``)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings

from sourcewise.errors import AuthError, Blocked, ParseError, ProviderNotConfigured, TransientError
from sourcewise.models import RawResult
from sourcewise.web.providers.base import (
    HttpRequest,
    HttpResponse,
    Provider,
    check_status,
    json_body,
    option_aliases,
    options_config,
    received,
    results_from,
)

NAME = "searxng"


class SearxngOptions(BaseSettings):
    """``[providers.searxng]``: the instance's URL (or ``SEARXNG_URL``)."""

    model_config = options_config(NAME)

    url: str | None = Field(default=None, validation_alias=option_aliases(NAME, "url", "SEARXNG_URL"))


def configured(options: SearxngOptions) -> tuple[bool, str]:
    if options.url:
        return True, f"instance {options.url}"
    return False, f"no instance: set SEARXNG_URL (or `url` under [providers.{NAME}] in the config file)"


def build(query: str, max_results: int, options: SearxngOptions) -> HttpRequest:
    if not options.url:
        raise ProviderNotConfigured(NAME, configured(options)[1])
    base = options.url.rstrip("/")
    return HttpRequest(
        "GET",
        f"{base}/search",
        params={"q": query, "format": "json", "pageno": 1},
        headers={"Accept": "application/json"},
    )


def parse(response: HttpResponse) -> list[RawResult]:
    if response.status == 403:
        raise AuthError(
            NAME,
            "the instance refused format=json: add `json` to `search.formats` in its settings.yml",
        )
    check_status(NAME, response)
    body = json_body(NAME, response)
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        raise ParseError(NAME, "the JSON has no 'results' list")
    out = results_from(
        NAME,
        body["results"],
        snippet="content",
        published=lambda i: i.get("publishedDate"),
        received=received(response),
    )
    engines = body.get("unresponsive_engines") or []
    if not isinstance(engines, list):
        raise ParseError(NAME, "'unresponsive_engines' is not a list")
    broken = [(str(e[0]), str(e[1])) for e in engines if isinstance(e, list | tuple) and len(e) >= 2]
    if not out and broken:
        # Zero results because the engines behind the instance failed is not "no results".
        why = ", ".join(f"{engine} ({reason})" for engine, reason in broken)
        if any("captcha" in reason.lower() or "suspended" in reason.lower() for _, reason in broken):
            raise Blocked(NAME, f"the instance's engines are blocked: {why}")
        raise TransientError(NAME, f"the instance's engines did not answer: {why}")
    return out


PROVIDER = Provider(
    name=NAME,
    summary="a SearXNG instance you run or trust (JSON API)",
    configured=configured,
    build=build,
    parse=parse,
    max_per_request=20,
    self_hosted=True,
    options=SearxngOptions,
)
