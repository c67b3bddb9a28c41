"""The code source on a real tree: this interpreter's standard library (tests and site-packages left out).

Measured in one run: a cold index build into the SQLite cache, a warm refresh with nothing changed
(the walk and one stat per file that every search pays), the same build in memory, and query time.
The reference is ``grep -rIil --include=*.py`` for the same words over the same tree in the same run
(a scan with no index: what a user without one would run). Index size is the SQLite file on disk.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import subprocess
import sysconfig
import tempfile
import time
from pathlib import Path

from sourcewise.config import Settings
from sourcewise.models import SourceQuery
from sourcewise.sources.code.source import CodeOptions, CodeSource

STDLIB = Path(sysconfig.get_paths()["stdlib"])
EXCLUDE = (
    "test/",
    "tests/",
    "site-packages/",
    "idlelib/",
    "lib2to3/",
    "tkinter/",
    "__pycache__/",
    "config-*/",
)
QUERIES = ["token expiry", "parse header", "socket timeout", "json decoder", "thread pool executor",
           "read lines", "http cookie", "event loop", "unicode normalize", "temporary directory"]  # fmt: skip


def _median_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000


async def _measure(state: Path) -> dict[str, object]:
    opts = CodeOptions(path=STDLIB, exclude=EXCLUDE, include=("*.py",))
    source = CodeSource("stdlib", opts, Settings(state_dir=state))
    t = time.perf_counter()
    report = await source.refresh()
    cold = time.perf_counter() - t
    warm = []
    for _ in range(5):
        t = time.perf_counter()
        await source.refresh()
        warm.append(time.perf_counter() - t)
    assert source._index is not None
    assert source._index.db is not None
    size = sum(p.stat().st_size for p in source._index.db.parent.glob("*"))
    query_times = []
    for q in QUERIES * 3:
        t = time.perf_counter()
        await asyncio.to_thread(source._index.search, *_args(q))
        query_times.append(time.perf_counter() - t)
    search_times = []
    for q in QUERIES:
        t = time.perf_counter()
        await source.search(SourceQuery(source="code", mode="keyword", query=q))
        search_times.append(time.perf_counter() - t)
    await source.aclose()
    memory = CodeSource("mem", opts.model_copy(update={"cache": False}), Settings(state_dir=state))
    t = time.perf_counter()
    await memory.refresh()
    mem = time.perf_counter() - t
    await memory.aclose()
    return {"report": report, "cold": cold, "warm": warm, "size": size, "query": query_times,
            "search": search_times, "memory": mem}  # fmt: skip


def _args(q: str) -> tuple[str, str, object, int]:
    from sourcewise.sources._fts import fts_match

    return fts_match(q.split()), "", lambda _p: True, 10


def _grep() -> list[float]:
    exclude = [f"--exclude-dir={e.rstrip('/').rstrip('*').rstrip('-')}*" for e in EXCLUDE]
    times = []
    for q in QUERIES:
        args = ["grep", "-rIil", "--include=*.py", *exclude]
        for word in q.split():
            args += ["-e", word]
        t = time.perf_counter()
        subprocess.run([*args, str(STDLIB)], capture_output=True, check=False)
        times.append(time.perf_counter() - t)
    return times


def run() -> str:
    if shutil.which("grep") is None:
        return "grep not found; skipped"
    state = Path(tempfile.mkdtemp(prefix="sw-bench-code-"))
    try:
        m = asyncio.run(_measure(state))
        grep = _grep()
    finally:
        shutil.rmtree(state, ignore_errors=True)
    r = m["report"]
    cold, mem, size = float(m["cold"]), float(m["memory"]), int(m["size"])  # type: ignore[arg-type]
    warm, query, search = m["warm"], m["query"], m["search"]  # type: ignore[assignment]
    files, chunks = r.files, r.chunks  # type: ignore[attr-defined]
    q50 = _median_ms(query)  # type: ignore[arg-type]
    g50 = _median_ms(grep)
    return "\n".join(
        [
            f"Tree: {STDLIB} (*.py, without tests, site-packages, idlelib, lib2to3, tkinter): "
            f"{files:,} files, {chunks:,} chunks; index {size / 1e6:.1f} MB on disk.",
            "",
            "| step | median | per second | ratio |",
            "|---|---|---|---|",
            f"| cold build into the SQLite cache | {cold * 1000:.0f} ms | {chunks / cold:,.0f} chunks/s | 1.0 |",
            f"| same build in memory (`cache = false`) | {mem * 1000:.0f} ms | {chunks / mem:,.0f} chunks/s | {mem / cold:.2f}x |",
            f"| warm refresh, nothing changed (5 runs) | {_median_ms(warm):.1f} ms | | {_median_ms(warm) / 1000 / cold:.3f}x |",  # type: ignore[arg-type]
            f"| FTS5 query, 10 queries x 3 | {q50:.2f} ms (p95 {sorted(query)[int(len(query) * 0.95) - 1] * 1000:.2f}) | | |",  # type: ignore[arg-type]
            f"| `search()`: refresh + query + hits | {_median_ms(search):.1f} ms | | |",  # type: ignore[arg-type]
            f"| reference: `grep -rIil` same words, same tree | {g50:.1f} ms | | grep / FTS5 query: {g50 / q50:.1f}x |",
        ]
    )
