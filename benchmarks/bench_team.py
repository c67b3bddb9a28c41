"""Team server benchmark (issue 28): the knowledge base on PostgreSQL beside the embedded one.

``python benchmarks/run.py team``: starts a throwaway PostgreSQL 15 (tests/pgserver.py: initdb +
pg_ctl in a temporary folder), indexes the shared Vaswani collection and the project's Korean set
(benchmarks/data/korean.json) into both backends, and reports
nDCG@10 and MAP (same queries, same qrels, same run), index time and lexical query p50/p95 on each,
and p50 with a door user's readers filter inside the query (``READERS``: every file here is public, so
the results must not change; the figure is the filter's cost).
``TEAM_ASK=0`` leaves out the concurrent ``/ask`` run (``bench_teamask``).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import bench_kb

from sourcewise.sources.kb.source import KnowledgeBase

sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))

from pgserver import postgres

READERS = ("*", "user:minji@corp", "group:hr")  # what an [access] user with a name and a group carries


def _measure(location: str, corpus: Path, queries: dict[str, str]) -> tuple[dict[str, list[str]], str]:
    kb = KnowledgeBase(location, semantic=False)
    t0 = time.perf_counter()
    report = kb.index([corpus])
    took = time.perf_counter() - t0
    ranked = {q: bench_kb._ids(kb.search(text, mode="lexical", limit=200)) for q, text in queries.items()}
    p50, p95 = bench_kb._timed(lambda t: kb.search(t, mode="lexical"), list(queries.values()))
    p50r, _ = bench_kb._timed(lambda t: kb.search(t, mode="lexical", readers=READERS), list(queries.values()))
    same = sum(
        bench_kb._ids(kb.search(text, mode="lexical", limit=10, readers=READERS)) == ranked[q][:10]
        for q, text in queries.items()
    )
    size = kb.store.disk_bytes() / 1e6
    kb.close()
    return (
        ranked,
        f"{report.chunks} chunks in {took:.1f} s ({report.chunks / took:,.0f}/s), {size:.1f} MB | {p50:.2f} | "
        f"{p95:.2f} | {p50r:.2f} ({same}/{len(queries)} same top 10)",
    )


def _compare(
    label: str, docs: dict[str, str], queries: dict[str, str], qrels: dict[str, dict[str, int]]
) -> str:
    """Both backends on one collection, in turn, in the same run."""
    corpus = bench_kb.CACHE / f"team-{label}"
    bench_kb._write_corpus(docs, corpus)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, postgres() as server:
        for name, location in (
            ("embedded (tantivy)", str(Path(tmp) / "kb.sqlite3")),
            ("PostgreSQL 15", server.url()),
        ):
            ranked, speed = _measure(location, corpus, queries)
            quality = bench_kb._quality(name, ranked, qrels).rstrip(" |")
            rows.append((quality, speed, ranked))
    lines = [
        f"{label}: {len(docs)} documents, {len(qrels)} judged queries; both backends in the same run, in turn.", "",
        "| backend | nDCG@10 | MAP | index | query p50 ms | query p95 ms | p50 ms with readers |",
        "|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    lines += [f"{quality} | {speed} |" for quality, speed, _ in rows]
    same = sum(rows[0][2][q][:10] == rows[1][2][q][:10] for q in queries)
    lines += ["", f"Same top 10 on both backends for {same} of {len(queries)} queries."]
    return "\n".join(lines)


def vaswani() -> str:
    if not bench_kb.VASWANI.exists():
        return "../shared/data/ir/vaswani is absent: skipped"
    return _compare("Vaswani", *bench_kb._vaswani())


def korean() -> str:
    data = json.loads((bench_kb.HERE / "data" / "korean.json").read_text("utf-8"))
    queries = {k: v["text"] for k, v in data["queries"].items()}
    return _compare("Korean (benchmarks/data/korean.json)", data["docs"], queries,
                    {k: v["rel"] for k, v in data["queries"].items()})  # fmt: skip


def run() -> str:
    parts = [
        f"Load before: {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} cores.",
        "",
        vaswani(),
        "",
        korean(),
    ]
    if os.environ.get("TEAM_ASK", "1") != "0":
        import bench_teamask

        parts += ["", bench_teamask.run()]
    parts += ["", f"Load after: {os.getloadavg()[0]:.2f} (1 min)."]
    return "\n".join(parts)
