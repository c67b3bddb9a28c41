"""The pure pipeline (canonicalise, dedup, rate, rank) over 10,000 raw results from 5 providers.

Ours is ``merge_results``, the one pass the engine runs (canonical key, rating, dedup, rank).

Reference, measured in the same run: the seed's own pipeline (key = host + path without a
trailing slash, first one kept, sort by tier/score with a stub rater), which does less work and
merges pages that differ only in their query string. Quality: on generated results whose true
identity is known, how many distinct pages each key merges by mistake, and how many true
duplicates it misses.
"""

from __future__ import annotations

import random
import statistics
import time
from urllib.parse import urlsplit

from sourcewise.models import RawResult
from sourcewise.web.domains import default_table
from sourcewise.web.rank import merge_results

HOSTS = [
    "react.dev",
    "docs.python.org",
    "kubernetes.io",
    "stackoverflow.com",
    "github.com",
    "medium.com",
    "dev.to",
    "velog.io",
    "qiita.com",
    "vercel.com",
    "blog.example.com",
    "news.site.example",
    "developer.mozilla.org",
    "www.reddit.com",
    "someone.tistory.com",
    "unknown-shop.example",
]
PROVIDERS = ["duckduckgo", "searxng", "brave", "tavily", "google"]
QUERY = "React Server Components tutorial"


def make_results(n: int, seed: int = 7) -> tuple[list[RawResult], list[int]]:
    """``n`` raw results and, for each, the id of the page it really is."""
    rng = random.Random(seed)
    pages = []
    for page_id in range(n // 3):
        host = rng.choice(HOSTS)
        # 30% of pages differ from others only by their query string (/item?id=N), as shops,
        # forums and trackers do; the rest have a path of their own.
        if rng.random() < 0.3:
            path, query = "/item", f"?id={page_id}"
        else:
            path, query = f"/{rng.choice(['docs', 'blog', 'questions', 'r'])}/{page_id}", ""
        pages.append((page_id, host, path, query))
    results, truth = [], []
    for i in range(n):
        page_id, host, path, query = rng.choice(pages)
        variant = rng.randrange(5)
        scheme = "http" if variant == 1 else "https"
        shown_host = ("www." + host) if variant == 2 and not host.startswith("www.") else host
        tail = "/" if variant == 3 else ""
        tracking = ("&" if query else "?") + "utm_source=x" if variant == 4 else ""
        url = f"{scheme}://{shown_host}{path}{tail}{query}{tracking}"
        if i % 500 == 0:
            url = "not a url"  # the odd broken one, dropped and logged
        results.append(
            RawResult(
                title=f"Result {i}",
                url=url,
                snippet="text " * rng.randrange(5, 60),
                provider=PROVIDERS[i % 5],
                position=1 + i % 20,
            )
        )
        truth.append(page_id)
    return results, truth


def ours(raw: list[RawResult], table: object) -> int:
    """What the engine runs: the fused pass (``merge_results``)."""
    return len(merge_results(raw, QUERY, table)[0])  # type: ignore[arg-type]


def cold(raw: list[RawResult], table: object) -> int:
    """``ours`` with every cache emptied first (host keys, host profiles, ratings, provider hits)."""
    from sourcewise.web import rank as rank_module
    from sourcewise.web import rating, urlparse, urls

    urls._key.cache_clear()
    urlparse._host.cache_clear()
    rating._profile.cache_clear()
    rating._RATINGS.clear()
    rank_module._provider_hit.cache_clear()
    return ours(raw, table)


def seed_key(url: str) -> str:
    parsed = urlsplit(url)
    return (parsed.hostname or "") + parsed.path.rstrip("/")


def seed_pipeline(raw: list[RawResult]) -> int:
    seen: set[str] = set()
    kept = []
    for r in raw:
        if "://" not in r.url:
            continue
        key = seed_key(r.url)
        if key not in seen:
            seen.add(key)
            kept.append((1, 90, r))
    kept.sort(key=lambda t: (t[0], -t[1]))
    return len(kept)


def mistakes(keys: list[str | None], truth: list[int]) -> tuple[int, int]:
    """(distinct pages merged by mistake, duplicate groups split by mistake)."""
    by_key: dict[str, set[int]] = {}
    by_page: dict[int, set[str]] = {}
    for key, page in zip(keys, truth, strict=True):
        if key is None:
            continue
        by_key.setdefault(key, set()).add(page)
        by_page.setdefault(page, set()).add(key)
    merged = sum(len(p) - 1 for p in by_key.values())
    split = sum(len(k) - 1 for k in by_page.values())
    return merged, split


def timed(fn: object, *args: object, runs: int = 5) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(*args)  # type: ignore[operator]
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def interleaved(*calls: tuple[object, tuple[object, ...]], runs: int = 15) -> list[float]:
    """Median seconds of each call, the calls taking turns in every round (a shared, noisy
    machine then slows them alike)."""
    samples: list[list[float]] = [[] for _ in calls]
    for _ in range(runs):
        for i, (fn, args) in enumerate(calls):
            start = time.perf_counter()
            fn(*args)  # type: ignore[operator]
            samples[i].append(time.perf_counter() - start)
    return [statistics.median(s) for s in samples]


def run() -> str:
    from sourcewise.errors import InvalidURL
    from sourcewise.web.urls import canonical_url

    raw, truth = make_results(10_000)
    table = default_table()
    import logging

    logging.getLogger("sourcewise").setLevel(logging.ERROR)
    ours_s, seed_s, cold_s = interleaved(
        (ours, (raw, table)), (seed_pipeline, (raw,)), (cold, (raw, table)), runs=15
    )

    def key(url: str) -> str | None:
        try:
            return canonical_url(url)
        except InvalidURL:
            return None

    our_keys = [key(r.url) for r in raw]
    seed_keys = [seed_key(r.url) if "://" in r.url else None for r in raw]
    our_merge, our_split = mistakes(our_keys, truth)
    seed_merge, seed_split = mistakes(seed_keys, truth)
    n = len(raw)
    return "\n".join(
        [
            "| pipeline | median time | results/s | ratio to seed |",
            "|---|---|---|---|",
            f"| sourcewise `merge_results` (canonical_url, dedup+merge, rate, rank; 15 runs, taking turns with the seed) | {ours_s * 1000:.1f} ms | {n / ours_s:,.0f} | {ours_s / seed_s:.2f}x |",
            f"| the same, every cache emptied before each run (15 runs, taking turns) | {cold_s * 1000:.1f} ms | {n / cold_s:,.0f} | {cold_s / seed_s:.2f}x |",
            f"| seed 000 reference (host+path key, no rating; 15 runs) | {seed_s * 1000:.1f} ms | {n / seed_s:,.0f} | 1.0 |",
            "",
            "| dedup key | distinct pages merged by mistake | duplicates missed |",
            "|---|---|---|",
            f"| sourcewise `canonical_url` | {our_merge} | {our_split} |",
            f"| seed 000 `normalizeUrl` | {seed_merge} | {seed_split} |",
        ]
    )


if __name__ == "__main__":
    print(run())
