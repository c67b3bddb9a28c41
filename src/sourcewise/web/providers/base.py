"""The provider interface: a provider builds a request and parses a response, both pure.

Everything that touches the network lives in ``sourcewise.net``; a provider never does I/O, so
it is tested against recorded responses alone. A provider is a ``Provider`` value, registered
under the ``sourcewise.providers`` entry-point group, built-in ones exactly like plug-ins.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import AliasChoices, BaseModel
from pydantic_settings import SettingsConfigDict

from sourcewise.errors import (
    AuthError,
    Blocked,
    ParseError,
    ProviderError,
    QuotaExceeded,
    RateLimited,
    TransientError,
)
from sourcewise.models import RawResult
from sourcewise.net.http import HttpRequest, HttpResponse
from sourcewise.net.reasons import brief
from sourcewise.text.extract import is_challenge

if TYPE_CHECKING:  # types only: loading the settings loads the registry, which loads this
    from sourcewise.config import Settings

__all__ = [
    "HttpRequest",
    "HttpResponse",
    "Provider",
    "ProviderCall",
    "ProviderOutput",
    "check_status",
    "json_body",
    "key_detail",
    "no_parse",
    "no_request",
    "option_aliases",
    "options_config",
    "received",
    "results_from",
]


@dataclass(frozen=True)
class ProviderCall:
    """One search handed to a provider that does its own I/O (``Provider.run``)."""

    query: str
    max_results: int
    settings: Settings
    client: httpx.AsyncClient  # for provider APIs: the engine's client (net.http.make_client)
    deadline: float  # seconds this provider may take for this search
    clock: Callable[[], float]
    options: Any = None  # the provider's validated ``[providers.NAME]`` options, when it declares a model
    redirects: Any = None  # the session's redirect cache (net.redirects.RedirectCache)
    fetcher: Any = None  # the session's fetcher: its guarded client resolves grounding links
    connections: Any = None  # the engine's MCP connections (net.mcp.Connections), kept for its life
    started: float = field(default_factory=time.monotonic)  # when the call began (monotonic clock)

    def left(self) -> float:
        """Seconds of this call's budget left for work after the answer (resolving its grounding
        links), less a margin: the caller's own deadline of the same length must not fire and
        lose an answer already received. Never below zero."""
        spent = time.monotonic() - self.started
        return max(0.0, self.deadline - spent - max(0.25, 0.1 * self.deadline))


@dataclass(frozen=True)
class ProviderOutput:
    """What a provider answered: results and, for grounded providers, a cited answer."""

    results: list[RawResult]
    answer: str | None = None


@dataclass(frozen=True)
class Provider:
    """A web search provider, declared as data plus two pure functions.

    A provider that is not one HTTP request and a pure parse (a subprocess, an MCP server, a
    library, or a request followed by more requests) sets ``run``; the engine then calls it
    instead of ``build``/``send``/``parse``. Its ``build`` and ``parse`` stay pure and testable.

    ``options``: the provider's own options model (a pydantic model, keys included), read from
    ``[providers.NAME]`` and validated once when a session starts. A provider that declares one
    receives its validated options, instead of the settings, in ``configured`` and ``build``
    (and as ``ProviderCall.options``). The built-ins declare theirs the same way (their keys
    still read from ``BRAVE_API_KEY`` ...). See docs/adding-a-provider.md.
    """

    name: str
    summary: str
    #: (ready, detail): detail says where the key/URL came from, or how to configure it.
    configured: Callable[[Any], tuple[bool, str]]
    build: Callable[[str, int, Any], HttpRequest]
    parse: Callable[[HttpResponse], list[RawResult]]
    max_per_request: int = 10
    run: Callable[[ProviderCall], Awaitable[ProviderOutput]] | None = None
    #: The user's own instance at a URL they configured (SearXNG): short back-offs after a 429.
    self_hosted: bool = False
    options: type[BaseModel] | None = None


def json_body(provider: str, response: HttpResponse) -> Any:
    """The decoded JSON body; ``Blocked`` for a bot-challenge page, else ``ParseError``."""
    try:
        return json.loads(response.text)
    except ValueError as exc:
        if is_challenge(response.text, response.headers):
            raise Blocked(
                provider, f"HTTP {response.status}: a bot challenge (CAPTCHA) instead of results"
            ) from exc
        raise ParseError(provider, f"expected JSON, got {brief(response.text, 80)!r}") from exc


def received(response: HttpResponse) -> datetime | None:
    """When the answer came, as the base for relative dates ("2 days ago") in it."""
    if response.received_at is None:
        return None
    return datetime.fromtimestamp(response.received_at, UTC)


def check_status(provider: str, response: HttpResponse, detail: str = "") -> None:
    """Raise the typed error for a non-2xx status that the provider did not handle itself."""
    status = response.status
    if 200 <= status < 300:
        return
    suffix = f": {brief(detail)}" if detail else ""  # the server's words, short and whole
    if status == 429:
        raise RateLimited(provider, f"HTTP 429 Too Many Requests{suffix}", retry_after=response.retry_after)
    if status in (401, 403):
        raise AuthError(provider, f"HTTP {status}: the key was refused{suffix}; check it is valid")
    if status == 402:
        raise QuotaExceeded(provider, f"HTTP 402: payment required{suffix}")
    if status >= 500 or status == 408:
        raise TransientError(
            provider, f"HTTP {status} from the server{suffix}", retry_after=response.retry_after
        )
    raise ProviderError(provider, f"HTTP {status}{suffix}")


def results_from(
    provider: str,
    items: Any,
    *,
    url: str = "url",
    title: str = "title",
    snippet: str,
    published: Callable[[dict[str, Any]], Any] = lambda item: None,
    received: datetime | None = None,
) -> list[RawResult]:
    """``RawResult``s from a list of JSON objects, in order; non-objects are skipped.
    ``ParseError`` when ``items`` is not a list."""
    from sourcewise.web.rank import published_from

    if not isinstance(items, list):
        raise ParseError(provider, f"expected a list of results, got {type(items).__name__}")
    return [
        RawResult(
            title=str(item.get(title) or ""),
            url=str(item.get(url) or ""),
            snippet=str(item.get(snippet) or ""),
            provider=provider,
            position=i,
            published=published_from(published(item), now=received),
        )
        for i, item in enumerate((x for x in items if isinstance(x, dict)), start=1)
    ]


def key_detail(value: object, env: str, provider: str, field: str = "api_key") -> tuple[bool, str]:
    """Configured-or-not wording shared by key-based providers (never shows the key): a missing
    key names the provider's own variable and its ``[providers.NAME]`` field."""
    if value:
        return True, "API key set"
    return False, f"no key: set {env} (or `{field}` under [providers.{provider}] in the config file)"


def option_aliases(provider: str, field: str, *env: str) -> AliasChoices:
    """A provider option's names: the ``[providers.NAME]`` key, ``SOURCEWISE_NAME_FIELD`` and the
    provider's usual environment variables (``BRAVE_API_KEY``)."""
    prefix = provider.upper().replace("-", "_")
    return AliasChoices(field, f"SOURCEWISE_{prefix}_{field.upper()}", *env)


def options_config(provider: str) -> SettingsConfigDict:
    """The settings config of a built-in provider's options model: ``SOURCEWISE_NAME_*`` variables."""
    prefix = provider.upper().replace("-", "_")
    return SettingsConfigDict(env_prefix=f"SOURCEWISE_{prefix}_", extra="forbid", frozen=True)


def no_request(name: str) -> Callable[[str, int, Settings], HttpRequest]:
    """``build`` for a provider that runs itself and sends no HTTP request of its own."""

    def build(query: str, max_results: int, settings: Settings) -> HttpRequest:
        raise ProviderError(name, "this provider runs itself (Provider.run); it has no HTTP request")

    return build


def no_parse(name: str) -> Callable[[HttpResponse], list[RawResult]]:
    """``parse`` for a provider that runs itself and reads no HTTP response through the engine."""

    def parse(response: HttpResponse) -> list[RawResult]:
        raise ProviderError(name, "this provider runs itself (Provider.run); it parses no HTTP response")

    return parse
