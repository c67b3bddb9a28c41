"""Per-call cost of the public functions a caller uses one at a time: ``route()``, ``plan()``,
``rate_source()`` and ``canonical_url()``, with the settings resolved once at the edge
(``load_settings()``, the environment and the config file) and passed to each call, as a caller
holding a ``Session`` does. Nothing keeps settings between calls any more (issue 19), so one last
row shows the price of a call that is given no settings and reads them itself.

Reference, measured in the same run: the seed's URL key (``urlsplit``, host + path), per call.
Each function runs over the same inputs in batches; the batches take turns in every round and the
figure is the median of the rounds, per call: wall time, and CPU time (``time.process_time``), which
a busy shared machine disturbs less.

Two input sets. *Repeated*: the same 8 URLs or questions in every batch, so caches answer most of
the work (``urlsplit`` keeps its last results too, so the seed's key is then a cache hit as well).
*Distinct*: every call gets an input never seen before in the process (the 8 URLs with a new path
segment, the 8 questions with a new word), so no per-input cache helps; only what is kept per host
or per word (a new URL of a known site, a question made of known words) still is, as in real use.
The seed's key is measured on distinct URLs too.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from urllib.parse import urlsplit

QUESTIONS = [
    "How do I configure React Server Components caching?",
    "최신 Next.js 15 릴리스 변경사항 알려줘",
    "what is our internal deploy policy for payments service",
    "compare FastAPI vs Flask performance 2025",
    "Who decided to move the billing DB to Postgres last month?",
    "https://docs.python.org/3/library/asyncio.html 이 문서 요약해줘",
    "지난주 회의에서 결정된 배포 일정",
    "kubernetes ingress nginx timeout settings",
]
URLS = [
    "https://react.dev/reference/react/useState",
    "http://www.docs.python.org/3/library/asyncio.html?utm_source=x",
    "https://github.com/facebook/react/issues/123",
    "https://medium.com/@someone/react-hooks-explained-1234",
    "https://stackoverflow.com/questions/123456/how-to-x",
    "https://kubernetes.io/blog/2024/01/01/post/",
    "https://someone.tistory.com/77",
    "https://www.reddit.com/r/reactjs/comments/abc/title/",
]
ROUNDS = 15
BATCH = 25


def seed_key(url: str) -> str:
    parsed = urlsplit(url)
    return (parsed.hostname or "") + parsed.path.rstrip("/")


def distinct_urls(tag: str, count: int) -> list[str]:
    """``count`` URLs never seen before: each of ``URLS`` with a new last path segment."""
    out = []
    for n in range(count):
        base, mark, query = URLS[n % len(URLS)].partition("?")
        out.append(f"{base.rstrip('/')}/{tag}{n}{mark}{query}")
    return out


def distinct_questions(tag: str, count: int) -> list[str]:
    """``count`` questions never seen before: each of ``QUESTIONS`` with a new word."""
    return [f"{QUESTIONS[n % len(QUESTIONS)]} {tag}{n}" for n in range(count)]


def _each(fn: Callable[[str], object], inputs: list[str], per_batch: int) -> Callable[[], object]:
    """A batch of ``per_batch`` calls of ``fn``, each on the next input."""
    feed = iter(inputs)
    return lambda: [fn(next(feed)) for _ in range(per_batch)]


def run() -> str:
    from functools import partial

    import sourcewise

    settings = sourcewise.load_settings()  # the edge: read once, passed down
    rate_source = partial(sourcewise.rate_source, settings=settings)
    route = partial(sourcewise.route, settings=settings)
    plan = partial(sourcewise.plan, settings=settings)
    need = (ROUNDS * BATCH + 1) * len(URLS)
    calls: list[tuple[str, Callable[[], object], int]] = [
        (
            "seed 000 URL key (`urlsplit` host + path; reference)",
            lambda: [seed_key(u) for u in URLS],
            len(URLS),
        ),
        ("`canonical_url(url)`", lambda: [sourcewise.canonical_url(u) for u in URLS], len(URLS)),
        ("`rate_source(url)`", lambda: [rate_source(u) for u in URLS], len(URLS)),
        ("`route(question)`", lambda: [route(q) for q in QUESTIONS], len(QUESTIONS)),
        ("`plan(question)`", lambda: [plan(q) for q in QUESTIONS], len(QUESTIONS)),
        (
            "distinct: seed 000 URL key (reference for the distinct rows)",
            _each(seed_key, distinct_urls("s", need), len(URLS)),
            len(URLS),
        ),
        (
            "distinct: `canonical_url(url)`",
            _each(sourcewise.canonical_url, distinct_urls("c", need), len(URLS)),
            len(URLS),
        ),
        (
            "distinct: `rate_source(url)`",
            _each(rate_source, distinct_urls("r", need), len(URLS)),
            len(URLS),
        ),
        (
            "distinct: `route(question)`",
            _each(route, distinct_questions("r", need), len(QUESTIONS)),
            len(QUESTIONS),
        ),
        (
            "distinct: `plan(question)`",
            _each(plan, distinct_questions("p", need), len(QUESTIONS)),
            len(QUESTIONS),
        ),
        (
            "`rate_source(url)` given no settings (reads them in the call)",
            lambda: [sourcewise.rate_source(u) for u in URLS[:1]],
            1,
        ),
    ]
    for _, fn, _ in calls:
        fn()  # first call: imports, settings, tables, caches
    samples: list[list[float]] = [[] for _ in calls]
    cpu: list[list[float]] = [[] for _ in calls]
    for _ in range(ROUNDS):
        for i, (_, fn, n) in enumerate(calls):
            start, start_cpu = time.perf_counter(), time.process_time()
            for _ in range(BATCH):
                fn()
            samples[i].append((time.perf_counter() - start) / (BATCH * n))
            cpu[i].append((time.process_time() - start_cpu) / (BATCH * n))
    per_call = [statistics.median(s) for s in samples]
    per_call_cpu = [statistics.median(s) for s in cpu]
    rows = [
        f"| call | median wall time per call ({ROUNDS} rounds of {BATCH} batches, taking turns) | ratio to the seed's URL key | median CPU time per call | ratio (CPU) |",
        "|---|---|---|---|---|",
    ]
    for i, ((label, _, _), seconds, busy) in enumerate(zip(calls, per_call, per_call_cpu, strict=True)):
        ref = 5 if 5 <= i < 10 else 0  # each set against the seed's key over the same kind of input
        base, base_cpu = per_call[ref], per_call_cpu[ref]
        rows.append(
            f"| {label} | {seconds * 1e6:.1f} µs | {seconds / base:.2f}x | {busy * 1e6:.1f} µs | {busy / base_cpu:.2f}x |"
        )
    try:  # the machine is shared: say how busy it was
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - a platform without it
        load = "unknown"
    rows.append(f"\nLoad average (1, 5, 15 min) at the end of the run: {load}")
    return "\n".join(rows)


if __name__ == "__main__":
    print(run())
