"""KorQuAD-style Korean passage retrieval: each question of KorQuAD 1.0's dev set searched over all
its paragraphs, the paragraph it was written from the one relevant (nDCG@10).

The data is not committed: ``dev()`` reads ``dataset/KorQuAD_v1.0_dev.json`` from the ``fetch``
mirror of korquad/korquad.github.io (LG CNS, CC BY-ND 2.0 KR) and keeps the paragraphs and
questions it derives in a cache folder outside the project. Run with the rest of the kb suite
(``python benchmarks/run.py kb``) or alone (``python benchmarks/run.py korquad``).

Rows, same run: plain BM25 on the words as written (bm25s, k1 1.2, b 0.75, as in the Vaswani
reference: its English stemmer and stop words leave Hangul as it is, so no Korean analysis), the one
analyzer (``text.analyze``) under SQLite FTS5's BM25, Kiwi's morphemes (kiwipiepy, when installed)
with the same bigrams under FTS5, and the knowledge base itself (``kb.search``, lexical).

The questions are split in two halves by a hash of their id (``half``): rules are studied on the
misses of the first half only; the second is held out, and each row is reported on both.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

MIRROR = Path("/work/.mirror/korquad+korquad.github.io")
BLOB = "dataset/KorQuAD_v1.0_dev.json"
CACHE = Path(tempfile.gettempdir()) / "sourcewise-bench" / "korquad"


def dev() -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, int]]] | str:
    """(paragraphs by id, questions by id, the relevant paragraph of each question), or why not."""
    cached = CACHE / "dev-passages.json"
    if not cached.exists():
        git = next((p for p in (MIRROR / "repo", MIRROR) if (p / "HEAD").exists()), None)
        if git is None:
            return f"{MIRROR} is absent (use the fetch tool: github:korquad/korquad.github.io)"
        raw = subprocess.run(
            ["git", "--git-dir", str(git), "show", f"HEAD:{BLOB}"], capture_output=True, check=False
        )
        if raw.returncode:
            return f"{BLOB} not in the mirror: {raw.stderr.decode(errors='replace').strip()}"
        CACHE.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(_passages(json.loads(raw.stdout))), "utf-8")
    data = json.loads(cached.read_text("utf-8"))
    return data["docs"], data["queries"], data["rels"]


def half(qid: str) -> str:
    """The half of the questions a question is in ("study" or "held out"), fixed by its id alone."""
    return "study" if int(hashlib.sha256(qid.encode()).hexdigest(), 16) % 2 == 0 else "held out"


def _passages(squad: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    """SQuAD-shaped JSON to passages and questions; a paragraph written twice is one passage."""
    docs: dict[str, str] = {}
    ids: dict[str, str] = {}
    queries: dict[str, str] = {}
    rels: dict[str, dict[str, int]] = {}
    for article in squad["data"]:
        for para in article["paragraphs"]:
            text = para["context"]
            pid = ids.setdefault(text, f"p{len(ids):04d}")
            docs[pid] = text
            for qa in para["qas"]:
                queries[qa["id"]] = qa["question"]
                rels[qa["id"]] = {pid: 1}
    return {"docs": docs, "queries": queries, "rels": rels}


def korquad() -> str:
    """The Markdown table of the three rows, same run."""
    import bench_kb

    from sourcewise.sources.kb.source import KnowledgeBase
    from sourcewise.text.analyze import analyze, bigrams, is_hangul

    got = dev()
    if isinstance(got, str):
        return f"KorQuAD skipped: {got}"
    docs, queries, rels = got
    rows: list[tuple[str, dict[str, list[str]], float]] = []
    t0 = time.perf_counter()
    reference = bench_kb._bm25s(docs, queries)  # its English stemmer and stop words leave Hangul as it is
    rows.append(("bm25s, its own tokenizer (reference)", reference, time.perf_counter() - t0))
    t0 = time.perf_counter()
    ours = bench_kb._fts_rank(docs, queries, lambda s: analyze(s, stem=True), "unicode61")
    rows.append(("the one analyzer under FTS5 BM25", ours, time.perf_counter() - t0))
    kiwi, note = bench_kb._kiwi()
    if kiwi is not None:  # the optional dictionary analyzer, with the same bigrams, for comparison
        t0 = time.perf_counter()
        tok = lambda s: [x for m in kiwi(s) for x in (m, *(bigrams(m) if is_hangul(m) else ()))]  # noqa: E731
        rows.append(
            (
                "Kiwi morphemes + bigrams under FTS5 BM25",
                bench_kb._fts_rank(docs, queries, tok, "unicode61"),
                time.perf_counter() - t0,
            )
        )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        bench_kb._write_corpus(docs, folder)
        with KnowledgeBase(Path(tmp) / "kb.sqlite3", semantic=False) as kb:
            t0 = time.perf_counter()
            kb.index([folder])
            ranked = {q: bench_kb._ids(kb.search(t, mode="lexical")) for q, t in queries.items()}
            rows.append(("**the knowledge base, lexical (`kb.search`)**", ranked, time.perf_counter() - t0))
    lines = [
        f"KorQuAD 1.0 dev: {len(docs)} paragraphs, {len(queries)} questions, one relevant paragraph each.",
        "",
        "| system | nDCG@10 | study half / held-out half | ratio to bm25s | time (index + all queries) |",
        "|---|---|---|---|---|",
    ]
    base = 0.0
    for name, ranked, took in rows:
        scores = {q: bench_kb.ndcg(ranked[q], rels[q]) for q in queries}
        score = statistics.mean(scores.values())
        halves = [
            statistics.mean(v for q, v in scores.items() if half(q) == h) for h in ("study", "held out")
        ]
        base = base or score
        lines.append(
            f"| {name} | {score:.4f} | {halves[0]:.4f} / {halves[1]:.4f} | {score / base:.3f}x | {took:.1f} s |"
        )
    return "\n".join([*lines, "", note])


def run() -> str:
    return korquad()
