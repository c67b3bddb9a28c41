"""The HTTP door under sustained load (issue 29): ``sourcewise serve`` with 1 and 4 workers over a
knowledge base of 10,000 real paragraphs (``kbcorpus``: the documentation installed on this
machine), ``POST /ask`` and ``POST /sources/search`` in waves of 200 concurrent requests.

Per scenario: errors (anything but a 200 with a body of the right shape, time-outs included), p50 and
p99 latency over every request, and the resident memory of the server's processes (summed RSS of
the uvicorn parent and its workers) after the first wave and after the last: the bar is growth
within 20% between the two. ``SOURCEWISE_BENCH_LOAD_WAVES`` sets the waves (default 10, so 2,000
requests). The reference in the same run is the first wave's own memory (what a warm server holds).

The corpus and its index live in a cache folder outside the project; the run rebuilds them if gone.
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from bench_doors import _peak_mb  # noqa: E402
from kbcorpus import build  # noqa: E402

from doorkit import free_port, wait_for  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "sourcewise-bench"
PARAGRAPHS = 10_000
WAVE = int(os.environ.get("SOURCEWISE_BENCH_LOAD_CONCURRENCY", "200"))
WAVES = int(os.environ.get("SOURCEWISE_BENCH_LOAD_WAVES", "10"))
WORKERS = (1, 4)
# Questions and queries in the corpus' own words (man pages and package docs), varied per request
# so that no cache answers a repeat.
WORDS = [
    "file",
    "directory",
    "option",
    "process",
    "signal",
    "terminal",
    "network",
    "memory",
    "command",
    "error",
]
SCENARIOS = {
    "/sources/search": lambda i: {"query": f"{WORDS[i % 10]} {WORDS[(i // 10) % 10]}", "sources": ["kb"]},
    "/ask": lambda i: {
        "question": f"how do I set the {WORDS[i % 10]} {WORDS[(i // 10) % 10]}?",
        "sources": ["kb"],
        "effort": "quick",
    },
}


@dataclass
class Run:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    kinds: Counter[str] = field(default_factory=Counter)  # what the errors were
    rss: list[float] = field(default_factory=list)  # after each wave
    rss_first: float = 0.0
    rss_last: float = 0.0
    seconds: float = 0.0

    def row(self, label: str) -> str:
        lat = sorted(self.latencies) or [float("nan")]
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
        growth = (self.rss_last / self.rss_first - 1) * 100 if self.rss_first else float("nan")
        total = len(self.latencies) + self.errors
        errors = (
            f"{self.errors} ({', '.join(f'{n} {k}' for k, n in self.kinds.items())})" if self.errors else "0"
        )
        return (
            f"| {label} | {total} | {errors} | {statistics.median(lat) * 1000:.0f} ms | {p99 * 1000:.0f} ms "
            f"| {total / self.seconds:.1f} | {self.rss_first:.0f} MB | {self.rss_last:.0f} MB | {growth:+.1f}% |"
        )


def _rss_mb(pid: int) -> float:
    """Summed VmRSS of ``pid`` and its children (the uvicorn workers)."""
    return _peak_mb(pid, "VmRSS")


def _error(path: str, response: httpx.Response) -> str | None:
    """``None`` for a 200 of the right shape (an answer may rightly cite nothing: not an error);
    else what went wrong (the status and the error's type, or a report's status)."""
    body: Any = response.json()
    if response.status_code != 200:
        error = body.get("error", {}) if isinstance(body, dict) else {}
        reports = {r.get("status") for r in error.get("reports") or []}
        return f"{response.status_code} {error.get('type')} {'/'.join(sorted(map(str, reports)))}".strip()
    shaped = isinstance(body[0]["hits"], list) if path == "/sources/search" else "citations" in body
    return None if shaped else "200 of the wrong shape"


async def _wave(client: httpx.AsyncClient, path: str, start: int, run: Run) -> None:
    async def one(i: int) -> None:
        began = time.perf_counter()
        try:
            error = _error(path, await client.post(path, json=SCENARIOS[path](i)))
        except httpx.HTTPError as exc:
            error = type(exc).__name__
        if error is None:
            run.latencies.append(time.perf_counter() - began)
        else:
            run.errors += 1
            run.kinds[error] += 1

    await asyncio.gather(*(one(start + i) for i in range(WAVE)))


async def _load(base: str, path: str, pid: int) -> Run:
    run = Run()
    # Idle connections dropped by the client after 1 s, before uvicorn closes them (5 s): else a
    # request sent on a connection the server is closing fails as a ReadError, a race of the
    # client's, not an error of the server's.
    limits = httpx.Limits(max_connections=WAVE, keepalive_expiry=1.0)
    async with httpx.AsyncClient(base_url=base, timeout=300, limits=limits) as client:
        began = time.perf_counter()
        for wave in range(WAVES):
            await _wave(client, path, wave * WAVE, run)
            run.rss.append(_rss_mb(pid))
        run.rss_first = run.rss[0]
        run.seconds = time.perf_counter() - began
        run.rss_last = _rss_mb(pid)
    return run


def _serve(state: Path, workers: int, path: str) -> Run:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ)
    env.update(
        SOURCEWISE_STATE_DIR=str(state),
        SOURCEWISE_PROVIDERS="searxng",
        SEARXNG_URL="http://127.0.0.1:9/unused",  # kb only: no request leaves the machine
        SOURCEWISE_RATE_LIMIT="0",
        SOURCEWISE_REQUEST_TIMEOUT="300",
        SOURCEWISE_SOURCE_TIMEOUT="60",
    )
    env.pop("SOURCEWISE_API_KEY", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sourcewise", "serve", "--port", str(port), "--workers", str(workers)],
        env=env,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(f"{base}/health", proc=None)
        return asyncio.run(_load(base, path, proc.pid))
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(60)


def run() -> str:
    from sourcewise import KnowledgeBase

    corpus, note = build(PARAGRAPHS, CACHE / "kbcorpus")
    state = CACHE / f"load-{PARAGRAPHS}"
    with KnowledgeBase(state / "kb.sqlite3", semantic=False) as kb:
        kb.index([corpus])
        chunks = kb.info()[1]
    lines = [
        f"Knowledge base: {note}, {chunks:,} chunks (lexical). {WAVES} waves of {WAVE} concurrent "
        f"requests per row; `/ask` with `effort: quick`, kb only. Load before: {os.getloadavg()[0]:.1f}.",
        "",
        "| door, workers | requests | errors | p50 | p99 | requests/s | RSS after wave 1 | RSS after last | growth |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    only = os.environ.get("SOURCEWISE_BENCH_LOAD_ONLY")  # "/ask" or "/sources/search"
    curves: list[str] = []
    for path in SCENARIOS:
        if only and only != path:
            continue
        for workers in WORKERS:
            done = _serve(state, workers, path)
            lines.append(done.row(f"{path}, {workers}"))
            curves.append(f"{path}, {workers}: " + " ".join(f"{mb:.0f}" for mb in done.rss))
    lines.append(f"\nLoad after: {os.getloadavg()[0]:.1f}. RSS (MB) after each wave:\n")
    lines += [f"- {curve}" for curve in curves]
    return "\n".join(lines)
