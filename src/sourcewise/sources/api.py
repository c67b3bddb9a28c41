"""The public functions over private sources: search them, describe them, ask across them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from sourcewise._sync import sync
from sourcewise.config import Settings
from sourcewise.errors import InvalidOption, InvalidQuery
from sourcewise.loops.ask import aask
from sourcewise.loops.retrieve import aretrieve
from sourcewise.models import SourceInfo, SourceQuery, SourceResult
from sourcewise.planning.validate import MIN_SOURCE_QUERY, validate_query
from sourcewise.session import Session
from sourcewise.sources import Source
from sourcewise.sources.filters import MAX_QUERY_CHARS
from sourcewise.text.words import printable

__all__ = ["asearch_sources", "ask", "asource_info", "retrieve", "search_sources", "source_info"]


async def asearch_sources(
    query: str,
    sources: Sequence[str | Source] | str | Source,
    *,
    limit: int = 10,
    session: Session | None = None,
    settings: Settings | None = None,
) -> list[SourceResult]:
    """Search ``sources`` at once with ``query`` written in their own syntax (``from:``, ``in:`` ...).

    ``sources``: configured names, specs (``kb``, ``code:PATH``, ``slack:PATH``, ``mail:PATH``,
    ``github:PATH``, ``web``) or ``Source`` objects. A source that fails raises its ``SourceError``
    (``ask`` is the call that carries on without it); one still building its first index when
    ``source_timeout`` has passed raises ``SourceStillIndexing`` (its index goes on being built),
    while any other source is waited for. ``session``: a long-lived one whose open sources answer
    (a door's); otherwise one is opened on ``settings`` for the call.
    """
    # Lone surrogates and control characters cannot be stored or matched: they are replaced or
    # dropped here, once, for every source (``text.words.printable``).
    # Private sources take queries of any useful length ("회의"); the web source checks the web's
    # 3-character minimum itself.
    text = validate_query(
        printable(validate_query(query, minimum=MIN_SOURCE_QUERY), one_line=True), minimum=MIN_SOURCE_QUERY
    )
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidQuery(f"a source query is at most {MAX_QUERY_CHARS} characters, got {len(text)}")
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 200:
        raise InvalidOption(f"limit must be 1-200, got {limit!r}")
    if session is None:
        async with Session(settings) as own:
            return await _search(own, text, sources, limit)
    return await _search(session, text, sources, limit)


async def _search(
    session: Session, text: str, sources: Sequence[str | Source] | str | Source, limit: int
) -> list[SourceResult]:
    chosen = session.sources(sources)
    deadline = session.settings.source_timeout
    found = await asyncio.gather(*(_one(s, text, limit, deadline) for s in chosen))
    return list(found)


async def _one(source: Source, text: str, limit: int, deadline: float) -> SourceResult:
    """``source``'s hits; past ``deadline``, ``SourceStillIndexing`` if it is still building its
    first index (``Source.still_indexing``, as in ``ask``), else the answer whenever it comes."""
    task = asyncio.ensure_future(
        source.search(SourceQuery(source=source.kind, mode="keyword", query=text), limit=limit)
    )
    try:
        done, _ = await asyncio.wait({task}, timeout=deadline)
        if not done and (busy := source.still_indexing(deadline)) is not None:
            raise busy
        return await task
    finally:
        if not task.done():  # a time-out, or the caller cancelled (Ctrl-C): nothing left running
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


search_sources = sync(asearch_sources)


async def asource_info(
    sources: Sequence[str | Source] | None = None,
    *,
    session: Session | None = None,
    settings: Settings | None = None,
) -> list[SourceInfo]:
    """What ``sourcewise sources`` shows: each configured source (default: also kb and web)."""
    if session is None:
        async with Session(settings) as own:
            return await asource_info(sources, session=own)
    from sourcewise.loops.ask import KB_LATER, WEB_WHY, default_sources

    built_in = [n for n in ("kb", "web") if n in session.registry.source_types]
    names = list(sources) if sources is not None else [*session.settings.sources, *built_in]
    later = {"kb": KB_LATER} if session.settings.ask_sources is None else {}
    why = {**later, **default_sources(session.settings), "web": WEB_WHY}
    infos = [await s.info() for s in session.sources(list(dict.fromkeys(names)))]
    return [i.model_copy(update={"in_ask": why.get(i.name)}) for i in infos]


source_info = sync(asource_info)
ask = sync(aask)
retrieve = sync(aretrieve)
