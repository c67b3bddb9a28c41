"""Brave Search API (``/res/v1/web/search``, header ``X-Subscription-Token``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

from sourcewise.errors import AuthError, ParseError, ProviderNotConfigured, QuotaExceeded, RateLimited
from sourcewise.models import RawResult
from sourcewise.web.providers.base import (
    HttpRequest,
    HttpResponse,
    Provider,
    check_status,
    json_body,
    key_detail,
    option_aliases,
    options_config,
    received,
    results_from,
)

NAME = "brave"


class BraveOptions(BaseSettings):
    """``[providers.brave]``: the key (or ``BRAVE_API_KEY``) and the endpoint."""

    model_config = options_config(NAME)

    api_key: SecretStr | None = Field(
        default=None, validation_alias=option_aliases(NAME, "api_key", "BRAVE_API_KEY")
    )
    url: str = "https://api.search.brave.com/res/v1/web/search"


def configured(options: BraveOptions) -> tuple[bool, str]:
    return key_detail(options.api_key, "BRAVE_API_KEY", NAME)


def build(query: str, max_results: int, options: BraveOptions) -> HttpRequest:
    if options.api_key is None:
        raise ProviderNotConfigured(NAME, configured(options)[1])
    return HttpRequest(
        "GET",
        options.url,
        params={"q": query, "count": min(max_results, 20)},
        headers={
            "Accept": "application/json",
            "X-Subscription-Token": options.api_key.get_secret_value(),
        },
    )


def _error(response: HttpResponse) -> None:
    try:
        body: Any = json_body(NAME, response)
        error = body.get("error") or {}
        code, detail = str(error.get("code", "")), str(error.get("detail", ""))
    except (ParseError, AttributeError):
        code, detail = "", ""
    if "QUOTA" in code.upper():
        raise QuotaExceeded(NAME, f"monthly quota used up ({detail or code}); see your Brave plan")
    if response.status == 429 or code == "RATE_LIMITED":
        raise RateLimited(NAME, f"rate limited ({detail or code})", retry_after=response.retry_after)
    if response.status in (401, 403) or "TOKEN" in code.upper():
        raise AuthError(NAME, f"the key was refused ({code or response.status}): check BRAVE_API_KEY")
    check_status(NAME, response, detail or code)


def parse(response: HttpResponse) -> list[RawResult]:
    if response.status != 200:
        _error(response)
    body = json_body(NAME, response)
    if not isinstance(body, dict):
        raise ParseError(NAME, "the JSON is not an object")
    if body.get("type") == "ErrorResponse":
        _error(response)
    web = body.get("web") or {}
    items = web.get("results") if isinstance(web, dict) else None
    if items is None:
        if "query" in body:  # a well-formed answer with no web section: no results
            return []
        raise ParseError(NAME, "the JSON has no 'web.results'")
    return results_from(
        NAME, items, snippet="description", published=lambda i: i.get("page_age"), received=received(response)
    )


PROVIDER = Provider(
    name=NAME,
    summary="Brave Search API (BRAVE_API_KEY)",
    configured=configured,
    build=build,
    parse=parse,
    max_per_request=20,
    options=BraveOptions,
)
