"""Tavily search API (``POST /search``, bearer key)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

from sourcewise.errors import AuthError, ParseError, ProviderNotConfigured, QuotaExceeded
from sourcewise.models import RawResult
from sourcewise.net.reasons import brief
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

NAME = "tavily"


class TavilyOptions(BaseSettings):
    """``[providers.tavily]``: the key (or ``TAVILY_API_KEY``) and the endpoint."""

    model_config = options_config(NAME)

    api_key: SecretStr | None = Field(
        default=None, validation_alias=option_aliases(NAME, "api_key", "TAVILY_API_KEY")
    )
    url: str = "https://api.tavily.com/search"


def configured(options: TavilyOptions) -> tuple[bool, str]:
    return key_detail(options.api_key, "TAVILY_API_KEY", NAME)


def build(query: str, max_results: int, options: TavilyOptions) -> HttpRequest:
    if options.api_key is None:
        raise ProviderNotConfigured(NAME, configured(options)[1])
    return HttpRequest(
        "POST",
        options.url,
        headers={"Authorization": f"Bearer {options.api_key.get_secret_value()}"},
        json={"query": query, "max_results": min(max_results, 20), "search_depth": "basic"},
    )


def _detail(response: HttpResponse) -> str:
    try:
        body: Any = json_body(NAME, response)
        detail = body.get("detail", body)
        return str(detail.get("error", detail) if isinstance(detail, dict) else detail)
    except (ParseError, AttributeError):
        return brief(response.text, 120)


def parse(response: HttpResponse) -> list[RawResult]:
    if response.status in (432, 433):  # Tavily: plan limit / pay-as-you-go limit reached
        raise QuotaExceeded(NAME, f"usage limit reached ({_detail(response)})")
    if response.status == 401:
        raise AuthError(NAME, f"the key was refused ({_detail(response)}): check TAVILY_API_KEY")
    check_status(NAME, response, "" if response.status < 400 else _detail(response))
    body = json_body(NAME, response)
    items = body.get("results") if isinstance(body, dict) else None
    if not isinstance(items, list):
        raise ParseError(NAME, "the JSON has no 'results' list")
    return results_from(
        NAME,
        items,
        snippet="content",
        published=lambda i: i.get("published_date"),
        received=received(response),
    )


PROVIDER = Provider(
    name=NAME,
    summary="Tavily search API (TAVILY_API_KEY)",
    configured=configured,
    build=build,
    parse=parse,
    max_per_request=20,
    options=TavilyOptions,
)
