"""The public functions behind ``sourcewise.*``: thin, typed, validated.

Each takes ``session=`` (a long-lived ``Session``: its settings, client, provider state) or
``settings=``; given neither, it reads the settings and opens a short session for the call.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sourcewise._sync import sync
from sourcewise.config import Settings, load_settings
from sourcewise.models import ProviderStatus, SearchResponse, SourceRating
from sourcewise.web.cite import cite
from sourcewise.web.domains import table_for
from sourcewise.web.rating import rate

if TYPE_CHECKING:  # the session (and its HTTP client) loads when a call needs it
    from sourcewise.session import Session

log = logging.getLogger("sourcewise")

__all__ = [
    "aprovider_status",
    "areset_providers",
    "asearch",
    "insert_citations",
    "provider_status",
    "rate_source",
    "reset_providers",
    "search",
]


def rate_source(
    url: str, query: str | None = None, *, settings: Settings | None = None, session: Session | None = None
) -> SourceRating:
    """Tier (1-4), reliability score (0-100) and the reason, for ``url`` given ``query``.

    Raises ``InvalidURL`` when ``url`` is not an absolute http(s) URL.
    """
    if session is not None:
        return rate(url, query, session.table)
    settings = load_settings() if settings is None else settings
    return rate(url, query, table_for(settings.official, settings.tiers))


async def asearch(
    query: str,
    *,
    tier: int | None = None,
    max_results: int | None = None,
    strategy: str = "default",
    providers: Sequence[str] | None = None,
    session: Session | None = None,
    settings: Settings | None = None,
) -> SearchResponse:
    """Search the web through the provider chain; results rated, de-duplicated and ranked.

    ``strategy``: ``default``, ``official`` (tier 1, widened while too few), ``comprehensive``
    (top 3 of each tier, at most 10) or ``progressive`` (tiers 1-2, then examples from tier 3).
    Raises ``InvalidQuery``/``InvalidOption`` for bad input and ``NoProviderAvailable`` when no
    provider answered; zero results is an empty ``results`` with a warning, never an error.
    """
    if session is None:
        from sourcewise.session import Session

        async with Session(settings) as own:
            return await asearch(
                query, tier=tier, max_results=max_results, strategy=strategy, providers=providers, session=own
            )
    return await session.engine.asearch(
        query, tier=tier, max_results=max_results, strategy=strategy, providers=providers
    )


search = sync(asearch)


async def aprovider_status(
    settings: Settings | None = None, *, session: Session | None = None
) -> list[ProviderStatus]:
    """What ``sourcewise providers`` shows: configured or not, suspended or not."""
    if session is None:
        from sourcewise.session import Session

        async with Session(settings) as own:
            return own.engine.status()
    return session.engine.status()


async def areset_providers(
    name: str | None = None, settings: Settings | None = None, *, session: Session | None = None
) -> int:
    """Lift the suspension of provider ``name`` (of every provider when ``None``): how many."""
    if session is None:
        from sourcewise.session import Session

        async with Session(settings) as own:
            return own.engine.reset(name)
    return session.engine.reset(name)


provider_status = sync(aprovider_status)
reset_providers = sync(areset_providers)


def insert_citations(text: str, grounding_metadata: Mapping[str, Any] | None) -> str:
    """``text`` with ``[n]`` after each grounded segment and a ``Sources:`` list appended.

    ``grounding_metadata`` is a Gemini ``groundingMetadata`` object (camelCase as the REST API
    sends it, or snake_case as the Python SDK dumps it). ``n`` is the chunk index + 1. Supports
    that are out of range or point at missing chunks are left out, each with a warning in the
    ``sourcewise`` log. Raises ``InvalidInput`` when ``text`` is not a str, the metadata is not a
    mapping, or a limit is passed.
    """
    result = cite(text, grounding_metadata)
    for note in result.notes:
        log.warning("citations: %s", note)
    return result.text
