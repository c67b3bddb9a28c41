"""The public functions over private sources: search them, describe them, ask across them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import date

from .ask import aask
from .config import Settings
from .core.filters import MAX_QUERY_CHARS
from .core.text import printable
from .core.validate import validate_query
from .engine import run_sync
from .errors import InvalidOption, InvalidQuery
from .gather import Progress
from .models import Answer, Retrieval, SourceInfo, SourceQuery, SourceResult
from .retrieve import aretrieve
from .session import Session
from .sources import Source, load_source_types

__all__ = ["asearch_sources", "ask", "asource_info", "retrieve", "search_sources", "source_info"]


async def asearch_sources(
    query: str,
    sources: Sequence[str | Source] | str | Source,
    *,
    limit: int = 10,
    settings: Settings | None = None,
) -> list[SourceResult]:
    """Search ``sources`` at once with ``query`` written in their own syntax (``from:``, ``in:`` ...).

    ``sources``: configured names, specs (``kb``, ``code:PATH``, ``slack:PATH``, ``mail:PATH``,
    ``github:PATH``, ``web``) or ``Source`` objects. A source that fails raises its ``SourceError``
    (``ask`` is the call that carries on without it).
    """
    # Lone surrogates and control characters cannot be stored or matched: they are replaced or
    # dropped here, once, for every source (``core.text.printable``).
    text = validate_query(printable(validate_query(query), one_line=True))
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidQuery(f"a source query is at most {MAX_QUERY_CHARS} characters, got {len(text)}")
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 200:
        raise InvalidOption(f"limit must be 1-200, got {limit!r}")
    async with Session(settings) as session:
        chosen = session.sources(sources)
        return list(
            await asyncio.gather(
                *(
                    s.search(SourceQuery(source=s.kind, mode="keyword", query=text), limit=limit)
                    for s in chosen
                )
            )
        )


def search_sources(
    query: str,
    sources: Sequence[str | Source] | str | Source,
    *,
    limit: int = 10,
    settings: Settings | None = None,
) -> list[SourceResult]:
    """Synchronous ``asearch_sources``."""
    return run_sync(asearch_sources(query, sources, limit=limit, settings=settings))


async def asource_info(
    sources: Sequence[str | Source] | None = None, *, settings: Settings | None = None
) -> list[SourceInfo]:
    """What ``sourcewise sources`` shows: each configured source (default: also kb and web)."""
    async with Session(settings) as session:
        built_in = [n for n in ("kb", "web") if n in load_source_types()]
        names = list(sources) if sources is not None else [*session.settings.sources, *built_in]
        return [await s.info() for s in session.sources(list(dict.fromkeys(names)))]


def source_info(
    sources: Sequence[str | Source] | None = None, *, settings: Settings | None = None
) -> list[SourceInfo]:
    """Synchronous ``asource_info``."""
    return run_sync(asource_info(sources, settings=settings))


def ask(
    question: str,
    *,
    sources: Sequence[str | Source] | None = None,
    reading: str | None = None,
    use_model: bool | None = None,
    limit: int = 10,
    today: date | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> Answer:
    """Answer ``question`` from every source at once, with ``[n]`` citations (see ``aask``)."""

    async def run() -> Answer:
        async with Session(settings) as session:
            return await aask(
                question,
                sources=sources,
                reading=reading,
                use_model=use_model,
                limit=limit,
                today=today,
                session=session,
                progress=progress,
            )

    return run_sync(run())


def retrieve(
    task: str,
    *,
    sources: Sequence[str | Source] | str | Source,
    max_cycles: int = 3,
    include: Sequence[str] = (),
    exclude: Sequence[str] | None = None,
    limit: int = 10,
    use_model: bool | None = None,
    today: date | None = None,
    settings: Settings | None = None,
) -> Retrieval:
    """What ``task`` needs from ``sources``, found in at most ``max_cycles`` cycles (see ``aretrieve``)."""

    async def run() -> Retrieval:
        async with Session(settings) as session:
            return await aretrieve(
                task, sources=sources, max_cycles=max_cycles, include=include, exclude=exclude,
                limit=limit, use_model=use_model, today=today, session=session,
            )  # fmt: skip

    return run_sync(run())
