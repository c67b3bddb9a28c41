"""Fan-out: every source at once, each under its own deadline, a ``SourceReport`` for each.

Seed 003's fallbacks live here:

1. a source that cannot answer (no path, not configured, no provider) is skipped and named;
2. every source but the web also gets the plan's variant queries (``planning.widen.alternatives``: other
   names for its terms, "k8s" for "Kubernetes"), its hits merged after the plan's own; a source
   that answers nothing is asked again with the plan's next broader form (``planning.widen.broaden``:
   dates, then source filters, then minor keywords, then the topic generalised) and its variants,
   at most ``MAX_BROADEN`` times, all within the same deadline;
3. a rate-limited source is reported with when to retry, while the others carry on.

A document source's hits get their document class (``answer/doctype.py``: meeting notes, status
update, spec, wiki page, announcement, chat export) for seed 003's authority hierarchies.

A source that raises anything, even a bug, costs only its own results. Cancelling the caller's task
(Ctrl-C) cancels every source's task and waits for them, so nothing is left running.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from sourcewise.answer.doctype import classify_hit
from sourcewise.errors import (
    NoProviderAvailable,
    ProviderError,
    ProviderNotConfigured,
    RateLimited,
    SourceError,
    SourceRateLimited,
    SourceUnavailable,
    SourcewiseError,
)
from sourcewise.models import Hit, Plan, ReportStatus, SourceQuery, SourceReport
from sourcewise.planning.widen import alternatives, broaden
from sourcewise.sources import Source

__all__ = ["MAX_BROADEN", "Gathered", "gather"]

MAX_BROADEN = 3
Progress = Callable[[SourceReport | str], Awaitable[None] | None]


@dataclass
class Gathered:
    reports: list[SourceReport] = field(default_factory=list)
    hits: list[list[Hit]] = field(default_factory=list)


@dataclass
class _Run:
    source: Source
    queries: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)


def _status_for(exc: BaseException) -> tuple[ReportStatus, str, float | None]:
    if isinstance(exc, TimeoutError):
        return "timeout", "no answer within the deadline", None
    if isinstance(exc, SourceRateLimited | RateLimited):
        return "rate_limited", str(exc), exc.retry_after
    if isinstance(exc, SourceUnavailable | ProviderNotConfigured | NoProviderAvailable):
        return "unavailable", str(exc), None
    if isinstance(exc, SourceError | ProviderError | SourcewiseError):
        return "failed", str(exc), None
    return "failed", f"unexpected error in the source: {type(exc).__name__}: {exc}", None


async def _search(run: _Run, query: SourceQuery, limit: int) -> list[Hit]:
    run.queries.append(query.query)
    result = await run.source.search(query, limit=limit)
    run.warnings.extend(w for w in result.warnings if w not in run.warnings)
    if not run.source.capabilities.documents:
        return list(result.hits)
    # a document source's pages by class (meeting notes, status, spec ...) for the hierarchies
    source = run.source
    return [classify_hit(hit, source.authority, source.options.classes) for hit in result.hits]


async def _round(run: _Run, plan: Plan, limit: int) -> None:
    """The plan's query and, except on the web (each query there costs), its variant queries
    (seed 003: "k8s" for "Kubernetes"), one after another; hits merged, the plan's own first."""
    queries = [run.source.query_for(plan)[0]]
    if not run.source.capabilities.web:
        queries += [run.source.query_for(alt)[0] for alt in alternatives(plan)]
    seen = {hit.location for hit in run.hits}
    for query in queries:
        if query.query in run.queries:
            continue
        for hit in await _search(run, query, limit):
            if hit.location not in seen:
                seen.add(hit.location)
                run.hits.append(hit)


async def _one(run: _Run, plan: Plan, limit: int) -> None:
    await _round(run, plan, limit)
    current: Plan | None = plan
    for _ in range(MAX_BROADEN):
        if run.hits or current is None:
            return
        current = broaden(current)
        if current is None:
            return
        run.dropped = list(current.dropped)
        await _round(run, current, limit)


async def _report(
    run: _Run, plan: Plan, limit: int, deadline: float, progress: Progress | None
) -> SourceReport:
    started = time.perf_counter()
    status: ReportStatus = "ok"
    error: str | None = None
    retry_after: float | None = None
    try:
        async with asyncio.timeout(deadline):
            await _one(run, plan, limit)
        status = "ok" if run.hits else "empty"
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # any failure of one source is that source's report, never the ask's
        status, error, retry_after = _status_for(exc)
        if status == "timeout" and (busy := run.source.still_indexing(deadline)):
            error = busy.detail
    report = SourceReport(
        source=run.source.name,
        kind=run.source.kind,
        status=status,
        queries=tuple(run.queries),
        hits=len(run.hits) if status == "ok" else 0,
        broadened=tuple(run.dropped),
        warnings=tuple(run.warnings),
        error=error,
        retry_after=retry_after,
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
    )
    if status != "ok":
        run.hits = []
    if progress is not None:
        maybe = progress(report)
        if maybe is not None:
            await maybe
    return report


async def gather(
    sources: Sequence[Source],
    plan: Plan,
    *,
    deadline: float,
    limit: int = 10,
    progress: Progress | None = None,
) -> Gathered:
    """Search every source in parallel, each within ``deadline`` seconds; reports in source order."""
    runs = [_Run(source) for source in sources]
    tasks = [asyncio.create_task(_report(run, plan, limit, deadline, progress)) for run in runs]
    try:
        reports = await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return Gathered(reports=list(reports), hits=[run.hits for run in runs])
