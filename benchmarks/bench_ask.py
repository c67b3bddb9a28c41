"""ask: parallel fan-out against a sequential run, and the quality of cited answers.

Fan-out: eight sources answer after set delays (50 to 400 ms). ``ask`` should take about as long
as the slowest one; the reference is the same eight searched one after another, in the same run.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import ClassVar

from sourcewise.config import Settings
from sourcewise.loops.ask import aask
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


# Each question with the docs/ file(s) that answer it: the answer's first cited source must be one.
QUESTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("How do I index my notes?", ("knowledge-base.md",)),
    ("How do I search a Slack export?", ("sources.md",)),
    ("What does the knowledge base do with Korean words?", ("korean.md",)),
    ("How do I configure a source in the config file?", ("sources.md", "configuration.md")),
    ("Which filters does the mail source understand?", ("sources.md",)),
    ("How do I search my code repository?", ("sources.md",)),
    ("What happens to the index when an index run is killed?", ("knowledge-base.md",)),
    ("How do I run sourcewise without internet?", ("getting-started.md", "configuration.md")),
    ("How are deleted files handled when re-indexing?", ("knowledge-base.md",)),
    ("What is semantic search and how do I turn it on?", ("configuration.md", "knowledge-base.md")),
]
# Questions docs/ does not answer: the answer must say that nothing answers them (no [n]).
UNANSWERABLE = [
    "What did we decide about the API migration timeline?",
    "What is new in React 19?",
    "Who is on call this weekend?",
    "zzqx vvbn wqpo",
]


def _quality() -> str:
    import tempfile
    from pathlib import Path

    from sourcewise.answer.extractive import support
    from sourcewise.sources.kb.source import KnowledgeBase

    docs = Path(__file__).resolve().parent.parent / "docs"
    state = Path(tempfile.mkdtemp(prefix="sourcewise-bench-answers-"))
    KnowledgeBase(state / "kb.sqlite3", semantic=False).index([docs])
    settings = Settings(state_dir=state, sources={"kb": {"type": "kb", "semantic": False}})

    async def one(question: str) -> tuple[float, int, int, int, str, list[str], bool]:
        started = time.perf_counter()
        async with Session(settings) as session:
            answer = await aask(question, sources=["kb"], session=session, use_model=False)
        took = time.perf_counter() - started
        supported = verbatim = 0
        for c in answer.citations:
            hit = answer.sources[c.marker - 1].hit
            body = hit.text or hit.snippet
            supported += support(c.sentence, body) >= 0.5
            said = c.sentence[1:-1] if c.sentence[:1] == c.sentence[-1:] == "`" else c.sentence  # a code line
            verbatim += " ".join(said.split()) in " ".join(body.split())
        files = [Path(r.hit.location.split("#")[0]).name for r in answer.sources]
        first = files[0] if files else ""
        return took, len(answer.citations), supported, verbatim, first, files, answer.answered

    questions = [q for q, _ in QUESTIONS]
    rows = [asyncio.run(one(q)) for q in questions]
    rows = [asyncio.run(one(q)) for q in questions]  # second pass: warm caches, as a session would be
    refused = [asyncio.run(one(q)) for q in UNANSWERABLE]
    web_p50 = _with_web(settings, state)
    cited = sum(r[1] for r in rows)
    supported = sum(r[2] for r in rows)
    verbatim = sum(r[3] for r in rows)
    p50 = statistics.median(r[0] for r in rows) * 1000
    answered = sum(1 for r in rows if r[1])
    first_ok = sum(1 for r, (_, want) in zip(rows, QUESTIONS, strict=True) if r[4] in want)
    any_ok = sum(1 for r, (_, want) in zip(rows, QUESTIONS, strict=True) if set(r[5]) & set(want))
    said_nothing = sum(1 for r in refused if not r[6] and not r[1])
    misses = [
        f"{q!r} -> {r[4] or 'no answer'} (expected {' or '.join(want)})"
        for r, (q, want) in zip(rows, QUESTIONS, strict=True)
        if r[4] not in want
    ]
    wrong = [q for r, q in zip(refused, UNANSWERABLE, strict=True) if r[6] or r[1]]
    return "\n".join(
        [
            f"{len(QUESTIONS)} questions about sourcewise over its own `docs/` (the sample corpus), each with "
            f"the file(s) that answer it, and {len(UNANSWERABLE)} questions `docs/` does not answer; "
            "extractive answers, knowledge base only (no web), lexical index.",
            "",
            "| measure | value |",
            "|---|---|",
            f"| questions answered with at least one citation | {answered}/{len(QUESTIONS)} |",
            f"| answers whose first cited source is the expected file | {first_ok}/{len(QUESTIONS)} |",
            f"| answers citing the expected file anywhere | {any_ok}/{len(QUESTIONS)} |",
            f'| unanswerable questions answered "nothing in kb answers this" (no citation) | '
            f"{said_nothing}/{len(UNANSWERABLE)} |",
            f"| cited sentences whose passage supports them (>= half their content words) | "
            f"{supported}/{cited} ({supported / max(1, cited):.0%}) |",
            f"| cited sentences found word for word in the cited passage | {verbatim}/{cited} |",
            f"| answer latency p50, knowledge base only (warm, in process) | {p50:.0f} ms |",
            f"| answer latency p50, knowledge base + web (SearXNG-shaped server on 127.0.0.1) | {web_p50:.0f} ms |",
            "",
            "Wrong first source: " + ("; ".join(misses) or "none") + ".",
            "Unanswerable questions given a cited answer: " + ("; ".join(wrong) or "none") + ".",
        ]
    )


def _with_web(settings: Settings, state: object) -> float:
    """The same questions with the web as a second source, served from 127.0.0.1."""
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from servers import Reply, local_server

    body = {
        "query": "q",
        "results": [
            {"url": f"https://docs.example.org/guide/{i}", "title": f"Guide {i}",
             "content": "How to index notes and search sources with filters, step by step."}
            for i in range(10)
        ],
        "unresponsive_engines": [],
    }  # fmt: skip
    with local_server() as server:
        server.route("/search", Reply(200, json.dumps(body), content_type="application/json"))
        web = settings.model_copy(
            update={"provider_options": {"searxng": {"url": server.url}}, "providers": ["searxng"]}
        )

        async def one(question: str) -> float:
            started = time.perf_counter()
            async with Session(web) as session:
                await aask(question, sources=["kb", "web"], session=session, use_model=False)
            return time.perf_counter() - started

        questions = [q for q, _ in QUESTIONS]
        [asyncio.run(one(q)) for q in questions]
        return statistics.median(asyncio.run(one(q)) for q in questions) * 1000


def run() -> str:
    return "### fan-out\n\n" + fanout() + "\n\n### answer quality\n\n" + _quality()
