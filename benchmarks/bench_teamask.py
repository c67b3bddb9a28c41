"""200 concurrent ``/ask`` across 4 workers in two processes with separate homes on one PostgreSQL
(and one Redis when redis-server is installed), beside the same 200 on one process with 4 workers
over the embedded knowledge base, in the same run. The questions are the Vaswani queries (real
text nobody here wrote), repeated to 200. An error is any status but 200 or a failed connection;
an answer without a citation (nothing relevant found) is counted apart."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
from pathlib import Path

import bench_kb

from sourcewise.sources.kb.source import KnowledgeBase

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))

from pgserver import postgres
from teamkit import asks, home, percentiles, servers

REQUESTS = 200


def _redis() -> contextlib.AbstractContextManager[str | None]:
    import shutil

    if shutil.which("redis-server") is None:
        return contextlib.nullcontext(None)
    from redisd import redis_server

    return redis_server()


def _row(name: str, got: tuple[list[float], list[str], int]) -> str:
    ms, errors, cited = got
    p50, p99 = percentiles(ms) if ms else (float("nan"), float("nan"))
    note = f" (first: {errors[0][:80]})" if errors else ""
    return f"| {name} | {len(ms)} | {cited} | {len(errors)}{note} | {p50:.0f} | {p99:.0f} |"


def run() -> str:
    if not bench_kb.VASWANI.exists():
        return "../shared/data/ir/vaswani is absent: the concurrent ask run is skipped"
    docs, queries, _ = bench_kb._vaswani()
    corpus = bench_kb.CACHE / "vaswani-team"
    bench_kb._write_corpus(docs, corpus)
    questions = [list(queries.values())[i % len(queries)] for i in range(REQUESTS)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp, postgres() as pg, _redis() as redis_url:
        root = Path(tmp)
        local = str(root / "embedded.sqlite3")
        for location in (local, pg.url()):
            with KnowledgeBase(location, semantic=False) as kb:
                kb.index([corpus])
        one = home(root / "single", local, redis_url)
        with servers([one], workers=4) as bases:
            rows.append(
                _row(
                    "1 process x 4 workers, embedded kb (reference)",
                    asyncio.run(asks(bases, questions, ["team"])),
                )
            )
        envs = [home(root / name, pg.url(), redis_url) for name in ("machine-a", "machine-b")]
        with servers(envs, workers=2) as bases:
            got = asyncio.run(asks(bases, questions, ["team"]))
            rows.append(_row("2 processes x 2 workers, separate homes, PostgreSQL kb", got))
    shared = "one Redis" if redis_url else "no Redis (redis-server absent)"
    return "\n".join([
        f"{REQUESTS} concurrent `/ask` (sources: the team kb; extractive answers), {shared}; both set-ups in the same run.", "",
        "| set-up | answered (200) | with citations | errors | p50 ms | p99 ms |", "|---|---|---|---|---|---|", *rows,
    ])  # fmt: skip
