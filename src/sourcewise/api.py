"""The public functions behind ``sourcewise.*``: thin, typed, validated."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._sync import sync
from .config import Settings, load_settings
from .core.tiers import SourceTable, rate, table_for
from .models import ProviderStatus, SearchResponse, SourceRating

if TYPE_CHECKING:
    from .engine import Engine

__all__ = ["asearch", "provider_status", "rate_source", "reset_providers", "search"]


def rate_source(url: str, query: str | None = None, *, settings: Settings | None = None) -> SourceRating:
    """Tier (1-4), reliability score (0-100) and the reason, for ``url`` given ``query``.

    Raises ``InvalidURL`` when ``url`` is not an absolute http(s) URL.
    """
    global _last_table
    settings = settings or load_settings()
    last = _last_table
    if last is None or last[0] is not settings:
        last = _last_table = (settings, table_for(settings.official, settings.tiers))
    return rate(url, query, last[1])


# The table of the settings last seen (settings are frozen, so the pair stays true): one pair,
# replaced whole, so that threads never see one part new and the other old.
_last_table: tuple[Settings, SourceTable] | None = None


async def asearch(
    query: str,
    *,
    tier: int | None = None,
    max_results: int | None = None,
    strategy: str = "default",
    providers: Sequence[str] | None = None,
    settings: Settings | None = None,
) -> SearchResponse:
    """Search the web through the provider chain; results rated, de-duplicated and ranked.

    ``strategy``: ``default``, ``official`` (tier 1, widened while too few), ``comprehensive``
    (top 3 of each tier, at most 10) or ``progressive`` (tiers 1-2, then examples from tier 3).
    Raises ``InvalidQuery``/``InvalidOption`` for bad input and ``NoProviderAvailable`` when no
    provider answered; zero results is an empty ``results`` with a warning, never an error.
    """
    engine = _engine(settings)
    try:
        return await engine.asearch(
            query, tier=tier, max_results=max_results, strategy=strategy, providers=providers
        )
    finally:
        engine.state.close()


search = sync(asearch)


def _engine(settings: Settings | None) -> Engine:
    from .engine import Engine  # here: the HTTP client and the providers load when first needed

    return Engine(settings)


def provider_status(settings: Settings | None = None) -> list[ProviderStatus]:
    """What ``sourcewise providers`` shows: configured or not, suspended or not."""
    engine = _engine(settings)
    try:
        return engine.status()
    finally:
        engine.state.close()


def reset_providers(name: str | None = None, settings: Settings | None = None) -> int:
    """Lift the suspension of provider ``name`` (of every provider when ``None``): how many."""
    engine = _engine(settings)
    try:
        return engine.reset(name)
    finally:
        engine.state.close()
