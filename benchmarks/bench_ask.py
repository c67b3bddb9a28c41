"""ask: parallel fan-out against a sequential run, and the quality of cited answers.

Fan-out: eight sources answer after set delays (50 to 400 ms). ``ask`` should take about as long
as the slowest one; the reference is the same eight searched one after another, in the same run.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import ClassVar

from sourcewise.ask import aask
from sourcewise.config import Settings
from sourcewise.models import Hit, SourceQuery, SourceResult
from sourcewise.session import Session
from sourcewise.sources import Source, SourceOptions

DELAYS = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4]
RUNS = 7


class DelayedSource(Source):
    """Answers one hit after ``delay`` seconds (a stand-in for a remote source's latency)."""

    type = "delayed"
    kind = "knowledge_base"
    authority = "wiki"
    filters: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, name: str, delay: float, settings: Settings) -> None:
        super().__init__(name, SourceOptions(), settings)
        self.delay = delay

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        await asyncio.sleep(self.delay)
        hit = Hit(
            title=f"{self.name} notes",
            location=f"delayed://{self.name}",
            text=f"The API migration is covered in {self.name}. It finishes in March.",
            source=self.name,
            kind=self.kind,
            authority=self.authority,
            score=1.0,
        )
        return self.result(query, [hit], [])


def _sources(settings: Settings) -> list[Source]:
    return [DelayedSource(f"s{i}", d, settings) for i, d in enumerate(DELAYS)]


async def _parallel(settings: Settings) -> float:
    sources = _sources(settings)
    started = time.perf_counter()
    async with Session(settings) as session:
        await aask("API migration timeline", sources=sources, session=session)
    return time.perf_counter() - started


async def _sequential(settings: Settings) -> float:
    sources = _sources(settings)
    started = time.perf_counter()
    for source in sources:
        await source.search(SourceQuery(source="knowledge_base", mode="keyword", query="API migration"))
    return time.perf_counter() - started


def fanout() -> str:
    settings = Settings(state_dir="/tmp/sourcewise-bench-ask")
    asyncio.run(_parallel(settings))  # warm imports
    par = statistics.median(asyncio.run(_parallel(settings)) for _ in range(RUNS))
    seq = statistics.median(asyncio.run(_sequential(settings)) for _ in range(RUNS))
    slowest = max(DELAYS)
    return "\n".join(
        [
            f"Eight sources answering after {', '.join(f'{d * 1000:.0f}' for d in DELAYS)} ms; median of {RUNS} runs.",
            "",
            "| run | wall time | over the slowest source (400 ms) |",
            "|---|---|---|",
            f"| `ask` (parallel gather, merge, rank, answer) | {par * 1000:.0f} ms | {par / slowest:.3f}x |",
            f"| the same sources one after another (reference) | {seq * 1000:.0f} ms | {seq / slowest:.3f}x |",
            "",
            f"`ask` takes {par / seq:.2f} of the sequential time.",
        ]
    )


def run() -> str:
    return "### fan-out\n\n" + fanout()
