"""SearXNG, a user's own metasearch instance, through its JSON API (``format=json``)."""

from __future__ import annotations

from ..config import Settings
from ..errors import AuthError, Blocked, ParseError, ProviderNotConfigured, TransientError
from ..models import RawResult
from .base import HttpRequest, HttpResponse, Provider, check_status, json_body, received, results_from

NAME = "searxng"


def configured(settings: Settings) -> tuple[bool, str]:
    if settings.searxng_url:
        return True, f"instance {settings.searxng_url}"
    return False, "no instance: set SEARXNG_URL (or `searxng_url` in the config file)"


def build(query: str, max_results: int, settings: Settings) -> HttpRequest:
    if not settings.searxng_url:
        raise ProviderNotConfigured(NAME, configured(settings)[1])
    base = settings.searxng_url.rstrip("/")
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
)
