"""Extraction quality and speed on the article-extraction-benchmark (../shared/data/extraction/aeb),
and the latency of a cached fetch.

Metric (as the benchmark describes it): per document, precision and recall of the word 4-gram
shingles of the extracted text against the ground truth; both averaged over documents; F1 of
the two averages. The reference is trafilatura's own ``extract()`` with its defaults, scored by
the same function in the same run, so the ratio says what our pipeline (charset handling,
challenge checks, Markdown output, fallbacks) costs or gains on top of the library it uses.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

AEB = Path(__file__).resolve().parents[2] / "shared" / "data" / "extraction" / "aeb"
_TOKEN = re.compile(r"\w+", re.UNICODE)


def shingles(text: str, n: int = 4) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text or "")
    return Counter(tuple(tokens[i : i + n]) for i in range(max(0, len(tokens) - n + 1)))


def precision_recall(truth: str, pred: str) -> tuple[float, float]:
    t, p = shingles(truth), shingles(pred)
    if not t and not p:
        return 1.0, 1.0
    tp = sum((t & p).values())
    precision = tp / sum(p.values()) if p else 0.0
    recall = tp / sum(t.values()) if t else 0.0
    return precision, recall


def score(pairs: list[tuple[str, str]]) -> tuple[float, float, float]:
    prs = [precision_recall(truth, pred) for truth, pred in pairs]
    p = statistics.mean(x for x, _ in prs)
    r = statistics.mean(y for _, y in prs)
    return 2 * p * r / (p + r), p, r


def load() -> list[tuple[bytes, str, str]]:
    truth = json.loads((AEB / "ground-truth.json").read_text("utf-8"))
    docs = []
    for key, item in sorted(truth.items()):
        path = AEB / "html" / f"{key}.html.gz"
        if path.exists():
            docs.append(
                (
                    gzip.decompress(path.read_bytes()),
                    item["articleBody"],
                    item.get("url") or "https://example.com/",
                )
            )
    return docs


def ours(body: bytes, url: str) -> str:
    from sourcewise.errors import FetchError
    from sourcewise.text.extract import extract

    try:
        return extract(body, "text/html", url).text
    except FetchError:
        return ""


def reference(body: bytes, url: str) -> str:
    import trafilatura

    from sourcewise.text.extract import decode

    return trafilatura.extract(decode(body, None, html=True), url=url) or ""


def timed_run(fn: Callable[[bytes, str], str], docs: list[tuple[bytes, str, str]]) -> tuple[float, list[str]]:
    start = time.perf_counter()
    out = [fn(body, url) for body, _, url in docs]
    return time.perf_counter() - start, out


def cached_fetch_latency(runs: int = 200) -> tuple[float, float]:
    """Median seconds of a cached fetch, and of an uncached one from a server on 127.0.0.1."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from sourcewise.config import load_settings
    from sourcewise.net.fetch import Fetcher

    from servers import Reply, local_server

    body = (AEB / "html").glob("*.html.gz").__next__().read_bytes()
    with local_server() as server, tempfile.TemporaryDirectory() as tmp:
        server.route("/page", Reply(200, gzip.decompress(body)))
        settings = load_settings(state_dir=Path(tmp), allow_private=True)

        async def measure() -> tuple[float, float]:
            fetcher = Fetcher(settings)
            try:
                url = server.url + "/page"
                await fetcher.document(url, allow_private=True)
                cached, fresh = [], []
                for _ in range(runs):
                    t = time.perf_counter()
                    await fetcher.document(url, allow_private=True)
                    cached.append(time.perf_counter() - t)
                for _ in range(20):
                    t = time.perf_counter()
                    await fetcher.document(url, allow_private=True, use_cache=False)
                    fresh.append(time.perf_counter() - t)
                return statistics.median(cached), statistics.median(fresh)
            finally:
                await fetcher.aclose()

        return asyncio.run(measure())


def run() -> str:
    if not AEB.exists():
        return f"skipped: {AEB} is absent"
    docs = load()
    our_times, ref_times = [], []
    our_out: list[str] = []
    ref_out: list[str] = []
    for _ in range(3):
        t, our_out = timed_run(ours, docs)
        our_times.append(t)
        t, ref_out = timed_run(reference, docs)
        ref_times.append(t)
    f_ours, p_ours, r_ours = score([(truth, pred) for (_, truth, _), pred in zip(docs, our_out, strict=True)])
    f_ref, p_ref, r_ref = score([(truth, pred) for (_, truth, _), pred in zip(docs, ref_out, strict=True)])
    n = len(docs)
    ours_s, ref_s = statistics.median(our_times), statistics.median(ref_times)
    cached, fresh = cached_fetch_latency()
    return "\n".join(
        [
            f"{n} pages; times are medians of 3 runs over all pages.",
            "",
            "| extractor | F1 | precision | recall | pages/s |",
            "|---|---|---|---|---|",
            f"| sourcewise `extract` (Markdown) | {f_ours:.3f} | {p_ours:.3f} | {r_ours:.3f} | {n / ours_s:.1f} |",
            f"| trafilatura `extract` defaults (reference) | {f_ref:.3f} | {p_ref:.3f} | {r_ref:.3f} | {n / ref_s:.1f} |",
            "",
            f"F1 ratio ours / trafilatura: **{f_ours / f_ref:.3f}**; speed ratio: {ref_s / ours_s:.2f}x",
            "",
            "| fetch | median latency |",
            "|---|---|",
            f"| cached (SQLite, 200 runs) | {cached * 1000:.2f} ms |",
            f"| uncached from a server on 127.0.0.1 (20 runs, includes extraction) | {fresh * 1000:.1f} ms |",
            f"| ratio | cached is {fresh / cached:.0f}x faster |",
        ]
    )


if __name__ == "__main__":
    print(run())
