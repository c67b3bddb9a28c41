"""A team deployment for tests and benchmarks: ``sourcewise serve`` processes, each with its own home
folder (config, state, cache: standing in for separate machines), sharing one knowledge base on
PostgreSQL and, when given, one Redis."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

from doorkit import free_port, spawn_all


def home(root: Path, kb_url: str, redis_url: str | None) -> dict[str, str]:
    """A home folder with a config naming the shared knowledge base ``team``; its environment."""
    root.mkdir(parents=True, exist_ok=True)
    lines = ['providers = ["searxng"]', f'[sources.team]\ntype = "kb"\npath = {json.dumps(kb_url)}']
    if redis_url:
        lines.insert(0, f"redis_url = {json.dumps(redis_url)}")
    (root / "config.toml").write_text("\n".join(lines) + "\n", "utf-8")
    return {
        **os.environ, "SOURCEWISE_CONFIG": str(root / "config.toml"), "SOURCEWISE_STATE_DIR": str(root / "state"),
        "XDG_CACHE_HOME": str(root / "cache"), "XDG_CONFIG_HOME": str(root / "config"),
        "SOURCEWISE_RATE_LIMIT": "0", "HF_HUB_OFFLINE": "1",
    }  # fmt: skip


@contextmanager
def servers(envs: Sequence[dict[str, str]], workers: int | Sequence[int]) -> Iterator[list[str]]:
    """One ``sourcewise serve --workers N`` per environment (N: ``workers``, or its number for that
    environment), started together; their base URLs."""
    counts = [workers] * len(envs) if isinstance(workers, int) else list(workers)
    ports = [free_port() for _ in envs]
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    started = zip(counts, ports, bases, envs, strict=True)
    with spawn_all(
        [(["serve", "--workers", str(n), "--port", str(p)], env, f"{b}/health") for n, p, b, env in started]
    ):
        yield bases


async def asks(
    bases: Sequence[str], questions: Sequence[str], sources: list[str]
) -> tuple[list[float], list[str], int]:
    """Every question at once, spread over ``bases``: (milliseconds of each 200, the errors: any
    other status or a failed connection, how many answers cite something)."""
    limits = httpx.Limits(max_connections=len(questions), max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=300, limits=limits) as client:

        async def one(i: int, question: str) -> tuple[float, bool] | str:
            t0 = time.perf_counter()
            body = {"question": question, "sources": sources}
            try:
                got = await client.post(f"{bases[i % len(bases)]}/ask", json=body)
            except httpx.HTTPError as exc:
                return f"{type(exc).__name__}: {exc}"
            if got.status_code != 200:
                return f"{got.status_code}: {got.text[:200]}"
            return (time.perf_counter() - t0) * 1000, bool(got.json().get("citations"))

        done = await asyncio.gather(*(one(i, q) for i, q in enumerate(questions)))
    answered = [d for d in done if isinstance(d, tuple)]
    return [ms for ms, _ in answered], [d for d in done if isinstance(d, str)], sum(c for _, c in answered)


def percentiles(ms: list[float]) -> tuple[float, float]:
    ordered = sorted(ms)
    return statistics.median(ordered), ordered[max(0, int(len(ordered) * 0.99) - 1)]
