"""Passage selection (``text.passages.top_passages``) against bm25s on the same pages and paragraphs.

Pages: the 181 article bodies of the article-extraction-benchmark (../shared/data/extraction/aeb,
ground truth). Prompt per page: four words of its middle paragraph (so that some passage answers
it). Both sides score the same paragraphs (``paragraphs(text)``) with BM25, k1 = 1.2, b = 0.75 and
the same idf (bm25s's "lucene" method), and keep the top 5 with a score above zero.

Timed per page, the sides taking turns: ours is ``top_passages(text, prompt)`` whole (paragraph
split, tokenizer, scoring, ranking); bm25s is its own tokenizer (``bm25s.tokenize``, no stop words,
no stemmer) over the same paragraphs and the prompt, ``index`` and ``retrieve`` - the paragraph
split is given to it free. Same passages: bm25s fed our tokens must return the passages we return
(ties in score aside), and the share of pages where bm25s with its own tokenizer agrees is shown.
"""

from __future__ import annotations

import json
import logging
import statistics
import time
from pathlib import Path

from sourcewise.text.analyze import analyze, query_terms
from sourcewise.text.passages import paragraphs, top_passages

AEB = Path(__file__).resolve().parents[2] / "shared" / "data" / "extraction" / "aeb" / "ground-truth.json"
K = 5
RUNS = 5


def pages() -> list[tuple[str, str]]:
    """(page text, prompt) for each page with at least three paragraphs."""
    data = json.loads(AEB.read_text("utf-8"))
    out = []
    for key in sorted(data):
        text = data[key].get("articleBody") or ""
        spans = paragraphs(text)
        if len(spans) < 3:
            continue
        s, e = spans[len(spans) // 2]
        words = [w for w in analyze(text[s:e], stem=True) if len(w) > 3]
        if len(words) < 4:
            continue
        prompt = " ".join(words[len(words) // 2 - 2 : len(words) // 2 + 2])
        out.append((text, prompt))
    return out


def _bm25s(corpus_tokens: object, query_tokens: object, n: int) -> list[tuple[int, float]]:
    import bm25s

    retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    retriever.index(corpus_tokens, show_progress=False)
    docs, scores = retriever.retrieve(query_tokens, k=min(K, n), show_progress=False)
    return [(int(d), float(s)) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


def bm25s_own(text: str, prompt: str, spans: list[tuple[int, int]]) -> list[tuple[int, float]]:
    import bm25s

    corpus = [text[s:e] for s, e in spans]
    corpus_tokens = bm25s.tokenize(corpus, stopwords=None, show_progress=False)
    query_tokens = bm25s.tokenize([prompt], stopwords=None, show_progress=False, return_ids=False)
    return _bm25s(corpus_tokens, query_tokens, len(corpus))


def _same(ours: list[int], theirs: list[tuple[int, float]], our_scores: dict[int, float]) -> bool:
    """Same passages, allowing a different pick among passages tied at the cut."""
    if len(ours) != len(theirs):
        return False
    if set(ours) == {d for d, _ in theirs}:
        return True
    cut = min(our_scores[i] for i in ours) if ours else 0.0
    sure = {i for i in ours if our_scores[i] > cut + 1e-9}
    return sure <= {d for d, _ in theirs}


def run() -> str:
    if not AEB.exists():
        return f"(skipped: {AEB} is absent)"
    import bm25s  # noqa: F401  (fail early when the bench extra is missing)

    logging.getLogger("bm25s").setLevel(logging.ERROR)
    data = pages()
    ours_t: list[float] = []
    theirs_t: list[float] = []
    same_tokens = same_own = 0
    for text, prompt in data:
        spans = paragraphs(text)
        ours = top_passages(text, prompt, K)
        picked = [p.index for p in ours]
        scores = {p.index: p.score for p in ours}
        docs = [analyze(text[s:e], stem=True) for s, e in spans]
        same_tokens += _same(
            picked, _bm25s(docs, [query_terms(prompt, stem=True, repeats=True)], len(spans)), scores
        )
        same_own += _same(picked, bm25s_own(text, prompt, spans), scores)
        a, b = [], []
        for _ in range(RUNS):
            start = time.perf_counter()
            top_passages(text, prompt, K)
            a.append(time.perf_counter() - start)
            start = time.perf_counter()
            bm25s_own(text, prompt, spans)
            b.append(time.perf_counter() - start)
        ours_t.append(statistics.median(a))
        theirs_t.append(statistics.median(b))
    n = len(data)
    ours_s, theirs_s = sum(ours_t), sum(theirs_t)
    ratios = sorted(o / t for o, t in zip(ours_t, theirs_t, strict=True))
    return "\n".join(
        [
            f"{n} pages, {sum(len(paragraphs(t)) for t, _ in data):,} paragraphs; per page the median of "
            f"{RUNS} runs, the sides taking turns.",
            "",
            "| passage selection | total time | median per page | ratio to bm25s (total) | median ratio per page |",
            "|---|---|---|---|---|",
            f"| sourcewise `top_passages` (split, tokenize, score, rank) | {ours_s * 1000:.1f} ms | "
            f"{statistics.median(ours_t) * 1e6:.0f} µs | {ours_s / theirs_s:.2f}x | "
            f"{statistics.median(ratios):.2f}x |",
            f"| bm25s {_version()} (its tokenizer, index, retrieve; paragraphs given) | {theirs_s * 1000:.1f} ms | "
            f"{statistics.median(theirs_t) * 1e6:.0f} µs | 1.0 | 1.0 |",
            "",
            "| same passages (top 5, ties at the cut aside) | pages |",
            "|---|---|",
            f"| bm25s fed our tokens | {same_tokens}/{n} |",
            f"| bm25s with its own tokenizer | {same_own}/{n} |",
        ]
    )


def _version() -> str:
    import bm25s

    return str(getattr(bm25s, "__version__", ""))


if __name__ == "__main__":
    print(run())
