"""Answers on real documentation: ``python benchmarks/run.py answers``.

The questions (``benchmarks/data/answers.json``) were written by reading five documentation sets
rebuilt on this machine by ``answer_docs.py`` (httpx's docs, FastAPI's Korean docs, the Rust Book,
three PDFs Debian ships, eight Debian man pages as a reference manual). Each set is indexed into
its own knowledge base (lexical; ``ANSWERS_SEMANTIC=1`` for hybrid) and every question is asked
with ``ask`` (extractive, no model). Reported per set and overall:

- **answered right**: every key fact in the answer (case-insensitive; ``a|b``: either wording) and a
  gold file cited;
- **cited right**: a gold file among the cited sources;
- **gold in top 5**: a gold file among the first five files of ``ask``'s ranked hits;
- **bm25s top 5** (the same-run reference): a gold file among bm25s's first five files, the
  files indexed whole (Snowball English stemmer, English stopwords, k1 1.2, b 0.75);
- **unanswerable handled**: a question the docs do not answer gets no cited answer;
- p50 latency of ``ask`` and the median answer length in units (sentences, items, rows, code blocks).

Every question falls in one of two halves by a hash of its text: **dev**, the half whose misses
are printed and studied when the answer path changes, and **test**, held out: its misses are only
counted, so a change fitted to the studied questions shows as a gap between the halves.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import statistics
import tempfile
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import answer_docs

from sourcewise.answer.extractive import units
from sourcewise.config import Settings
from sourcewise.loops.ask import aask
from sourcewise.session import Session
from sourcewise.sources.kb.source import KnowledgeBase

HERE = Path(__file__).parent
SETS = ("httpx", "fastapi-ko", "rust-book", "pdf", "man")
_MARKER = re.compile(r"\[\d+\]")


@dataclass
class Tally:
    asked: int = 0
    right: int = 0
    cited: int = 0
    top5: int = 0
    bm25s: int = 0
    refused: int = 0
    unanswerable: int = 0
    took: list[float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)


def split(question: str) -> str:
    """``dev`` or ``test``: the question's half, fixed by its text."""
    return "dev" if hashlib.sha256(question.encode("utf-8")).digest()[0] % 2 == 0 else "test"


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def _rel(location: str, root: Path) -> str:
    path = location.split("#", 1)[0]
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        return path


def _file_text(path: Path) -> str:
    if path.suffix == ".pdf":
        from pypdf import PdfReader

        return "\n".join(page.extract_text() or "" for page in PdfReader(str(path)).pages)
    return path.read_text("utf-8", "replace")


def _bm25s_top5(root: Path, questions: list[str]) -> list[list[str]]:
    import bm25s
    import Stemmer

    files = sorted(p for p in root.rglob("*") if p.is_file())
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    corpus = [_file_text(p) for p in files]
    retriever.index(
        bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False
    )
    out = []
    for q in questions:
        tokens = bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False)
        if not tokens.vocab:
            out.append([])
            continue
        docs, _ = retriever.retrieve(tokens, k=min(5, len(files)), show_progress=False)
        out.append([str(files[i].relative_to(root)) for i in docs[0]])
    return out


def _length(text: str) -> int:
    return len(units(_MARKER.sub("", text), wrapped=False))


async def _run_set(
    name: str, root: Path, questions: list[dict[str, object]], refusals: list[str], tallies: dict[str, Tally]
) -> None:
    state = Path(tempfile.mkdtemp(prefix=f"sourcewise-answers-{name}-"))
    semantic = bool(os.environ.get("ANSWERS_SEMANTIC"))
    kb = KnowledgeBase(state / "kb.sqlite3", semantic=semantic)
    kb.index([root])
    kb.close()
    settings = Settings(state_dir=state, sources={"kb": {"type": "kb", "semantic": semantic}})
    bm = _bm25s_top5(root, [str(q["q"]) for q in questions])
    async with Session(settings) as session:
        for item, reference in zip(questions, bm, strict=True):
            question, gold, facts = str(item["q"]), list(item["gold"]), list(item["facts"])  # type: ignore[call-overload]
            tally = tallies[split(question)]
            started = time.perf_counter()
            answer = await aask(question, sources=["kb"], session=session, use_model=False)
            tally.took.append(time.perf_counter() - started)
            cited = {_rel(r.hit.location, root) for r in answer.sources}
            files = list(dict.fromkeys(_rel(r.hit.location, root) for r in answer.hits))
            text = _norm(answer.text)
            ok_cite = bool(cited & set(gold))
            ok = (
                answer.answered
                and ok_cite
                and all(any(_norm(w) in text for w in f.split("|")) for f in facts)
            )
            tally.asked += 1
            tally.right += ok
            tally.cited += ok_cite
            tally.top5 += bool(set(files[:5]) & set(gold))
            tally.bm25s += bool(set(reference) & set(gold))
            if answer.answered:
                tally.lengths.append(_length(answer.text))
            if not ok:
                tally.misses.append(
                    f"{name}: {question!r} -> {sorted(cited) or 'no answer'} (gold {', '.join(gold)})"
                )
        for question in refusals:
            tally = tallies[split(question)]
            answer = await aask(question, sources=["kb"], session=session, use_model=False)
            tally.unanswerable += 1
            tally.refused += not answer.answered or not answer.citations
            if answer.answered and answer.citations:
                tally.misses.append(
                    f"{name}: unanswerable {question!r} answered from {answer.sources[0].hit.location}"
                )


def _row(label: str, t: Tally) -> str:
    def pct(n: int, d: int) -> str:
        return f"{n}/{d} ({100 * n / d:.0f}%)" if d else "-"

    p50 = statistics.median(t.took) * 1000 if t.took else 0.0
    length = statistics.median(t.lengths) if t.lengths else 0
    return (
        f"| {label} | {pct(t.right, t.asked)} | {pct(t.cited, t.asked)} | {pct(t.top5, t.asked)} | "
        f"{pct(t.bm25s, t.asked)} | {pct(t.refused, t.unanswerable)} | {p50:.0f} ms | {length:g} |"
    )


def _add(total: Tally, tally: Tally) -> None:
    for key in ("asked", "right", "cited", "top5", "bm25s", "refused", "unanswerable"):
        setattr(total, key, getattr(total, key) + getattr(tally, key))
    total.took += tally.took
    total.lengths += tally.lengths
    total.misses += tally.misses


def run() -> str:
    data = json.loads((HERE / "data" / "answers.json").read_text("utf-8"))
    rows, notes = [], []
    halves = {"dev": Tally(), "test": Tally()}
    total = Tally()
    for name in SETS:
        root, note = answer_docs.build(name)
        if root is None:
            notes.append(f"- {name}: skipped ({note})")
            continue
        questions = [q for q in data["questions"] if q["set"] == name]
        refusals = [q["q"] for q in data["unanswerable"] if q["set"] == name]
        tallies = {"dev": Tally(), "test": Tally()}
        asyncio.run(_run_set(name, root, questions, refusals, tallies))
        tally = Tally()
        for half, part in tallies.items():
            _add(halves[half], part)
            _add(tally, part)
        rows.append(_row(name, tally))
        _add(total, tally)
    head = [
        "| set | answered right | cited right | gold in top 5 | bm25s top 5 (same run) | unanswerable handled | p50 | median answer (units) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    misses = "\n".join(f"- {m}" for m in halves["dev"].misses)
    return "\n".join(
        [
            *head,
            *rows,
            _row("**all**", total),
            _row("dev half (studied)", halves["dev"]),
            _row("test half (held out)", halves["test"]),
            "",
            *notes,
            "",
            f"<details><summary>misses of the dev half ({len(halves['dev'].misses)}; the test half's "
            f"{len(halves['test'].misses)} are not printed)</summary>",
            "",
            misses,
            "",
            "</details>",
        ]
    )
