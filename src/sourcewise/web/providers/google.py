"""Google Programmable Search (Custom Search JSON API v1). Needs a key and an engine id (cx)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

from sourcewise.errors import AuthError, ParseError, ProviderNotConfigured, QuotaExceeded, RateLimited
from sourcewise.models import RawResult
from sourcewise.net.reasons import brief
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

NAME = "google"
_DATE_TAGS = ("article:published_time", "og:updated_time", "date", "dc.date")


class GoogleOptions(BaseSettings):
    """``[providers.google]``: the key (or ``GOOGLE_CSE_KEY``), the engine id (or
    ``GOOGLE_CSE_ID``) and the endpoint."""

    model_config = options_config(NAME)

    api_key: SecretStr | None = Field(
        default=None, validation_alias=option_aliases(NAME, "api_key", "GOOGLE_CSE_KEY")
    )
    cse_id: str | None = Field(default=None, validation_alias=option_aliases(NAME, "cse_id", "GOOGLE_CSE_ID"))
    url: str = "https://www.googleapis.com/customsearch/v1"


def configured(options: GoogleOptions) -> tuple[bool, str]:
    missing = [
        (env, key)
        for env, key, value in (
            ("GOOGLE_CSE_KEY", "api_key", options.api_key),
            ("GOOGLE_CSE_ID", "cse_id", options.cse_id),
        )
        if not value
    ]
    if missing:
        envs = " and ".join(env for env, _ in missing)
        keys = " / ".join(f"`{key}`" for _, key in missing)
        return False, f"set {envs} (or {keys} under [providers.{NAME}] in the config file)"
    return True, f"API key set, engine {options.cse_id}"


def build(query: str, max_results: int, options: GoogleOptions) -> HttpRequest:
    if options.api_key is None or not options.cse_id:
        raise ProviderNotConfigured(NAME, configured(options)[1])
    return HttpRequest(
        "GET",
        options.url,
        params={
            "key": options.api_key.get_secret_value(),
            "cx": options.cse_id,
            "q": query,
            "num": min(max_results, 10),
        },
    )


def _error(response: HttpResponse) -> None:
    try:
        error: Any = json_body(NAME, response).get("error") or {}
        message = str(error.get("message", ""))
        reasons = " ".join(str(e.get("reason", "")) for e in error.get("errors") or [])
        status = str(error.get("status", ""))
    except (ParseError, AttributeError):
        message, reasons, status = brief(response.text, 120), "", ""
    text = f"{reasons} {status} {message}".lower()
    squashed = text.replace(" ", "")
    if "dailylimit" in squashed or "perday" in squashed:
        raise QuotaExceeded(NAME, f"daily quota used up: {message}")
    if "ratelimit" in squashed or "perminute" in squashed or response.status == 429:
        raise RateLimited(NAME, f"rate limited: {message}", retry_after=response.retry_after)
    if "quota" in text or "resource_exhausted" in text:
        raise QuotaExceeded(NAME, f"quota used up: {message}")
    if "key" in text or "permission_denied" in text or "accessnotconfigured" in text:
        raise AuthError(NAME, f"the key or engine id was refused: {message}")
    check_status(NAME, response, message)


def _published(item: dict[str, Any]) -> str | None:
    pagemap = item.get("pagemap")
    metatags = pagemap.get("metatags") if isinstance(pagemap, dict) else None
    for tags in metatags if isinstance(metatags, list) else []:
        for name in _DATE_TAGS:
            if isinstance(tags, dict) and tags.get(name):
                return str(tags[name])
    return None


def parse(response: HttpResponse) -> list[RawResult]:
    if response.status != 200:
        _error(response)
    body = json_body(NAME, response)
    if not isinstance(body, dict) or body.get("kind") != "customsearch#search":
        raise ParseError(NAME, "the JSON is not a customsearch#search answer")
    return results_from(
        NAME,
        body.get("items") or [],
        url="link",
        snippet="snippet",
        published=_published,
        received=received(response),
    )


PROVIDER = Provider(
    name=NAME,
    summary="Google Programmable Search (GOOGLE_CSE_KEY + GOOGLE_CSE_ID)",
    configured=configured,
    build=build,
    parse=parse,
    max_per_request=10,
    options=GoogleOptions,
)
