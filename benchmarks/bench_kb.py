"""Knowledge-base benchmark: Korean analyzers, Vaswani quality beside bm25s, real-text scale beside
tantivy and bm25s (``bench_kbscale``).

``python benchmarks/run.py kb`` (``KB_SKIP_SEMANTIC=1`` leaves the MiniLM runs out; embeddings of
the Vaswani corpus are cached under /tmp keyed by the corpus hash, so only the first run pays them).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import bench_kbscale

from sourcewise.answer.fusion import convex, rrf, semantic_reads
from sourcewise.sources.filters import parse_query
from sourcewise.sources.kb.embed import embedder, semantic_available
from sourcewise.sources.kb.query import StoreFilter
from sourcewise.sources.kb.search import lex_query
from sourcewise.sources.kb.source import CANDIDATES, KnowledgeBase
from sourcewise.text.analyze import analyze, strip_particle

HERE = Path(__file__).parent
VASWANI = next(
    (p for p in (HERE.parent.parent / "shared" / "data" / "ir" / "vaswani", Path("/work/shared/data/ir/vaswani"))
     if p.exists()), Path("/work/shared/data/ir/vaswani"),
)  # fmt: skip
CACHE = Path(tempfile.gettempdir()) / "sourcewise-bench"


def ndcg(ranked: list[str], rel: dict[str, int], k: int = 10) -> float:
    dcg = sum((2 ** rel.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def average_precision(ranked: list[str], rel: dict[str, int], k: int = 1000) -> float:
    hits, total = 0, 0.0
    for i, d in enumerate(ranked[:k]):
        if rel.get(d, 0) > 0:
            hits += 1
            total += hits / (i + 1)
    relevant = sum(1 for g in rel.values() if g > 0)
    return total / relevant if relevant else 0.0


# -- Korean ------------------------------------------------------------------------------------


def _fts_rank(
    docs: dict[str, str], queries: dict[str, str], tok: Callable[[str], list[str]], tokenizer: str
) -> dict[str, list[str]]:
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, body, tokenize={tokenizer!r})")
    db.executemany("INSERT INTO t VALUES(?, ?)", [(k, " ".join(tok(v))) for k, v in docs.items()])
    out = {}
    for qid, q in queries.items():
        terms = [t for t in dict.fromkeys(tok(q)) if t]
        if tokenizer == "trigram":
            terms = [t for t in terms if len(t) >= 3]  # trigram cannot match shorter terms
        expr = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        rows = (
            db.execute("SELECT id FROM t WHERE t MATCH ? ORDER BY rank LIMIT 10", (expr,)).fetchall()
            if expr
            else []
        )
        out[qid] = [r[0] for r in rows]
    return out


def _kiwi() -> tuple[Callable[[str], list[str]] | None, str]:
    try:
        import kiwipiepy
        import kiwipiepy_model
    except ImportError:
        return None, "kiwipiepy not installed"
    t0 = time.perf_counter()
    kiwi = kiwipiepy.Kiwi()
    kiwi.tokenize("배포를 진행합니다")  # the model loads lazily on first use
    load = time.perf_counter() - t0
    folder = Path(kiwipiepy_model.__file__).parent
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6
    keep = ("NN", "VV", "VA", "XR", "SL", "SH", "SN", "MM")

    def tok(text: str) -> list[str]:
        return [t.form.lower() for t in kiwi.tokenize(text) if t.tag.startswith(keep)]

    return tok, f"kiwipiepy {kiwipiepy.__version__}: model {size:.0f} MB, load + first call {load:.2f} s"


def korean() -> str:
    data = json.loads((HERE / "data" / "korean.json").read_text("utf-8"))
    docs, queries = data["docs"], {k: v["text"] for k, v in data["queries"].items()}
    rels = {k: v["rel"] for k, v in data["queries"].items()}
    particles_only = lambda s: [strip_particle(w) for w in re.findall(r"\w+", s.lower())]  # noqa: E731
    kiwi_tok, kiwi_note = _kiwi()
    runs: list[tuple[str, Callable[[str], list[str]], str]] = [
        ("whitespace FTS5 (unicode61)", str.split, "unicode61"),
        ("trigram FTS5", lambda s: [s], "trigram"),
        ("particles only (the old analyzer)", particles_only, "unicode61"),
        ("ours: particles + endings + bigrams", lambda s: analyze(s, stem=True), "unicode61"),
    ]
    if kiwi_tok:
        runs.append(("kiwipiepy morphemes", kiwi_tok, "unicode61"))
    lines = [f"{len(docs)} documents, {len(queries)} queries with graded judgments (`benchmarks/data/korean.json`).", "",
             "| analyzer | nDCG@10 | index time for the set |", "|---|---|---|"]  # fmt: skip
    for name, tok, tokenizer in runs:
        t0 = time.perf_counter()
        ranked = _fts_rank(docs, queries, tok, tokenizer)
        took = time.perf_counter() - t0
        score = statistics.mean(ndcg(ranked[q], rels[q]) for q in queries)
        lines.append(f"| {name} | {score:.3f} | {took * 1000:.0f} ms |")
    lines += ["", kiwi_note, "", _korean_kb_lexical(docs, queries, rels)]
    if semantic_available() and not os.environ.get("KB_SKIP_SEMANTIC"):
        lines += ["", *_korean_hybrid(docs, queries, rels)]
    return "\n".join(lines)


def _korean_kb_lexical(docs: dict[str, str], queries: dict[str, str], rels: dict[str, dict[str, int]]) -> str:
    """The knowledge base itself (tantivy, ``kbterms``' analyzer), lexical, on the same set."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        _write_corpus(docs, folder)
        with KnowledgeBase(Path(tmp) / "kb.sqlite3", semantic=False) as kb:
            kb.index([folder])
            score = statistics.mean(
                ndcg(_ids(kb.search(t, mode="lexical")), rels[q]) for q, t in queries.items()
            )
    return f"The knowledge base itself, lexical (`kb.search`), same set: nDCG@10 **{score:.4f}**."


def _korean_hybrid(
    docs: dict[str, str], queries: dict[str, str], rels: dict[str, dict[str, int]]
) -> list[str]:
    """The KB itself on the Korean set: lexical, MiniLM forced into hybrid, and hybrid as shipped."""
    model = embedder()
    assert model is not None
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        _write_corpus(docs, folder)
        kb = KnowledgeBase(Path(tmp) / "kb.sqlite3", semantic=True)
        kb.index([folder])
        lex, forced, shipped, sem = {}, {}, {}, {}
        for q, text in queries.items():
            lex[q] = _ids(kb.search(text, mode="lexical"))
            sem[q] = _ids(kb.search(text, mode="semantic"))
            shipped[q] = _ids(kb.search(text, mode="hybrid"))
            view = kb.store.view()
            pairs_lex = view.lexical(lex_query(parse_query(text), []), StoreFilter(), CANDIDATES)
            pairs_sem = kb.vectors.nearest(view, model, text, StoreFilter(), CANDIDATES)
            fused = convex(pairs_lex, pairs_sem)[:10]
            rows = view.rows([cid for cid, _ in fused])
            forced[q] = [Path(rows[cid].path).stem for cid, _ in fused]
        kb.close()
    read = sum(semantic_reads(t) for t in queries.values())
    out = ["The knowledge base itself on the same set (nDCG@10):", "",
           "| mode | nDCG@10 |", "|---|---|"]  # fmt: skip
    for name, ranked in (("lexical", lex), ("semantic (MiniLM)", sem),
                         ("hybrid with MiniLM forced in (convex 0.5)", forced),
                         ("**hybrid as shipped** (skips MiniLM on non-Latin queries)", shipped)):  # fmt: skip
        out.append(f"| {name} | {statistics.mean(ndcg(ranked[q], rels[q]) for q in queries):.4f} |")
    out += ["", f"`semantic_reads` let the model read {read} of the {len(queries)} queries."]
    return out


# -- Vaswani -----------------------------------------------------------------------------------


def _vaswani() -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, int]]]:
    raw = (VASWANI / "corpus" / "doc-text.trec").read_text("utf-8", "replace")
    docs = {
        m.group(1): m.group(2).strip() for m in re.finditer(r"<DOCNO>(\d+)</DOCNO>(.*?)</DOC>", raw, re.S)
    }
    qraw = (VASWANI / "query-text.trec").read_text("utf-8", "replace")
    queries = {
        m.group(1): m.group(2).strip().lower()
        for m in re.finditer(r"<num>(\d+)</num><title>(.*?)</title>", qraw, re.S)
    }
    qrels: dict[str, dict[str, int]] = {}
    for line in (VASWANI / "qrels").read_text().splitlines():
        parts = line.split()
        if len(parts) == 4 and int(parts[3]) > 0:
            qrels.setdefault(parts[0], {})[parts[2]] = int(parts[3])
    return docs, queries, qrels


def _bm25s(docs: dict[str, str], queries: dict[str, str]) -> dict[str, list[str]]:
    import bm25s
    import Stemmer

    ids = list(docs)
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(
        bm25s.tokenize([docs[i] for i in ids], stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    out = {}
    for qid, q in queries.items():
        res, _ = retriever.retrieve(
            bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False),
            k=min(1000, len(ids)),
            show_progress=False,
        )
        out[qid] = [ids[i] for i in res[0]]
    return out


def _write_corpus(docs: dict[str, str], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for docno, text in docs.items():
        (folder / f"{docno}.txt").write_text(text, "utf-8")


def _ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [Path(h.path).stem for h in hits]


def _quality(name: str, ranked: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> str:
    qs = [q for q in qrels if q in ranked]
    n = statistics.mean(ndcg(ranked[q], qrels[q]) for q in qs)
    m = statistics.mean(average_precision(ranked[q], qrels[q]) for q in qs)
    return f"| {name} | {n:.4f} | {m:.4f} |"


def vaswani() -> str:
    if not VASWANI.exists():
        return "../shared/data/ir/vaswani is absent: skipped"
    docs, queries, qrels = _vaswani()
    digest = hashlib.sha256(json.dumps(docs, sort_keys=True).encode()).hexdigest()[:16]
    corpus = CACHE / f"vaswani-{digest}"
    _write_corpus(docs, corpus)
    lines = [f"{len(docs)} documents, {len(qrels)} judged queries; reference and ours in the same run.", "",
             "| system | nDCG@10 | MAP |", "|---|---|---|"]  # fmt: skip
    ref = _bm25s(docs, queries)
    lines.append(_quality("bm25s + PyStemmer (k1 1.2, b 0.75), reference", ref, qrels))
    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase(Path(tmp) / "kb.sqlite3", semantic=False)
        t0 = time.perf_counter()
        report = kb.index([corpus])
        took = time.perf_counter() - t0
        lex = {q: _ids(kb.search(text, mode="lexical", limit=200)) for q, text in queries.items()}
        lines.append(_quality("sourcewise lexical (tantivy BM25)", lex, qrels))
        times = _timed(lambda t: kb.search(t, mode="lexical"), list(queries.values()))
        size = kb.store.disk_bytes() / 1e6
        kb.close()
    speed = f"Index: {report.chunks} chunks in {took:.1f} s = {report.chunks / took:,.0f} chunks/s; {size:.1f} MB on disk. Lexical query p50 {times[0]:.2f} ms, p95 {times[1]:.2f} ms."
    if os.environ.get("KB_SKIP_SEMANTIC"):
        return "\n".join([*lines, "", speed, "", "(semantic runs skipped: KB_SKIP_SEMANTIC)"])
    lines += _semantic_rows(corpus, queries, qrels, lex, digest)
    return "\n".join([*lines, "", speed])


def _semantic_rows(
    corpus: Path,
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    lex: dict[str, list[str]],
    digest: str,
) -> list[str]:
    kb = KnowledgeBase(CACHE / f"vaswani-{digest}-semantic.sqlite3", semantic=True)
    t0 = time.perf_counter()
    report = kb.index([corpus])  # embeds only what the cache lacks
    took = time.perf_counter() - t0
    model = embedder()
    assert model is not None, "the semantic extra is not installed"
    Key = tuple[int, int]
    ranked_sem: dict[str, list[tuple[Key, float]]] = {}
    ranked_lex: dict[str, list[tuple[Key, float]]] = {}
    view = kb.store.view()
    for q, text in queries.items():
        ranked_sem[q] = kb.vectors.nearest(view, model, text, StoreFilter(), CANDIDATES)
        ranked_lex[q] = view.lexical(lex_query(parse_query(text), []), StoreFilter(), CANDIDATES)
    paths: dict[Key, str] = {}

    def names(pairs: list[tuple[Key, float]]) -> list[str]:
        missing = [cid for cid, _ in pairs if cid not in paths]
        for cid, row in view.rows(missing).items():
            paths[cid] = Path(row.path).stem
        return [paths[cid] for cid, _ in pairs]

    out = [
        _quality(
            "sourcewise semantic (MiniLM-L6 cosine)", {q: names(v) for q, v in ranked_sem.items()}, qrels
        )
    ]
    out.append(
        _quality("hybrid, RRF k=60", {q: names(rrf(ranked_lex[q], ranked_sem[q])) for q in queries}, qrels)
    )
    for alpha in (0.3, 0.5, 0.7):
        fused = {q: names(convex(ranked_lex[q], ranked_sem[q], alpha)) for q in queries}
        out.append(_quality(f"hybrid, convex alpha={alpha}", fused, qrels))
    shipped = {q: _ids(kb.search(text, mode="hybrid", limit=200)) for q, text in queries.items()}
    out.append(_quality("**sourcewise hybrid as shipped (`kb.search`, convex alpha=0.5)**", shipped, qrels))
    times = _timed(lambda t: kb.search(t, mode="hybrid"), list(queries.values()))
    out.append("")
    out.append(
        f"Hybrid query p50 {times[0]:.1f} ms, p95 {times[1]:.1f} ms (model loaded; one MiniLM encode per query)."
    )
    out.append(
        f"Semantic index run: {report.embedded} chunks embedded in {took:.1f} s (0 when cached in {CACHE})."
    )
    kb.close()
    return out


def _timed(fn: Callable[[str], object], queries: list[str]) -> tuple[float, float]:
    for q in queries[:5]:
        fn(q)
    samples = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def run() -> str:
    parts = [
        "### Korean test set\n",
        korean(),
        "\n### Vaswani (quality)\n",
        vaswani(),
        "\n### Scale: real text beside tantivy and bm25s\n",
        bench_kbscale.scale(),
    ]
    return "\n".join(parts)
