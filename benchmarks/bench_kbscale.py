"""The knowledge base at scale on real text, beside tantivy and bm25s given the same files in the same run.

``python benchmarks/run.py kb`` runs it at ``KB_SIZES`` chunks (default ``10000,100000``; add
``1000000`` when there is time). The corpus is paragraphs of the documentation installed on this
machine (``kbcorpus``), one chunk per paragraph for every system. Each build runs in a process of its
own (peak RSS is that process's), the contenders one after the other; queries are timed in turn on
each query, so the machine's load falls on them alike.

- sourcewise: ``KnowledgeBase.index`` over the folder; ``kb.search(q, mode="lexical")``: the top 10
  with bodies and snippets.
- tantivy: its own English analyzer (``en_stem``) over title, heading and body (stored), the
  paragraphs read from the same files; the top 10, each body read and a snippet made
  (``SnippetGenerator``). Its re-index keeps a manifest of (mtime, size) per file, deletes the
  changed files by a ``path`` term and adds them again.
- bm25s (with PyStemmer, English stopwords): in memory, saved to disk for its size; top 10 and texts.
"""

from __future__ import annotations

import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kbcorpus

HERE = Path(__file__).parent
CACHE = Path(tempfile.gettempdir()) / "sourcewise-bench"
QUERIES = 200


def _rss_mb() -> float:
    """This process's peak RSS. Linux's ``ru_maxrss`` survives ``exec``, so a child started by a
    large parent reports the parent's size; ``VmHWM`` is the peak of this program alone."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _disk_mb(*paths: Path) -> float:
    total = 0
    for p in paths:
        if p.is_file():
            total += p.stat().st_size
        elif p.is_dir():
            total += sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    return total / 1e6


# -- what runs in a process of its own -----------------------------------------------------------


def _tantivy_schema() -> Any:
    import tantivy

    b = tantivy.SchemaBuilder()
    b.add_text_field("path", stored=True, tokenizer_name="raw")
    for name in ("title", "heading", "body"):
        b.add_text_field(name, stored=True, tokenizer_name="en_stem")
    return b.build()


def _tantivy_add(writer: Any, path: Path) -> int:
    import tantivy

    n = 0
    for title, heading, para in kbcorpus.chunks_of_file(path):
        writer.add_document(tantivy.Document(path=str(path), title=title, heading=heading, body=para))
        n += 1
    return n


def _manifest(folder: Path) -> dict[str, list[int]]:
    out = {}
    for path in folder.rglob("*.md"):
        st = path.stat()
        out[str(path)] = [st.st_mtime_ns, st.st_size]
    return out


def child(system: str, action: str, folder: Path, out: Path) -> dict[str, float]:
    """``build`` or ``update`` one system's index of ``folder`` at ``out``; what it took (imports apart)."""
    if system == "sourcewise":
        from sourcewise.sources.kb.source import KnowledgeBase
    elif system == "tantivy":
        import tantivy
    else:
        import bm25s
        import Stemmer
    t0, c0 = time.perf_counter(), _cpu_s()
    if system == "sourcewise":
        with KnowledgeBase(out / "kb.sqlite3", semantic=False) as kb:
            report = kb.index([folder])
        chunks = report.chunks
    elif system == "tantivy":
        (out / "tantivy").mkdir(exist_ok=True)
        index = tantivy.Index(_tantivy_schema(), path=str(out / "tantivy"), reuse=action != "build")
        known = json.loads((out / "manifest.json").read_text()) if action != "build" else {}
        now = _manifest(folder)
        changed = [p for p, v in now.items() if known.get(p) != v]
        writer = index.writer()
        chunks = 0
        for p in changed:
            if p in known:
                writer.delete_documents_by_term("path", p)
            chunks += _tantivy_add(writer, Path(p))
        if changed:
            writer.commit()
            writer.wait_merging_threads()
        (out / "manifest.json").write_text(json.dumps(now))
    else:
        texts = [para for _, _, para in kbcorpus.chunks_of(folder)]
        tokens = bm25s.tokenize(
            texts, stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False
        )
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        retriever.save(str(out / "bm25s"), corpus=texts)
        chunks = len(texts)
    took = time.perf_counter() - t0
    return {"seconds": took, "chunks": chunks, "rss_mb": _rss_mb(), "cpu_s": _cpu_s() - c0}


def _cpu_s() -> float:
    """CPU seconds of this process, every thread (the engine's indexing threads too)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def first_query(system: str, out: Path, query: str) -> dict[str, float]:
    """A new process's first answer (top 10 with bodies and snippets): the import of the library
    apart (sourcewise's is the whole package: settings, models), then opening and the query."""
    t0 = time.perf_counter()
    if system == "sourcewise":
        from sourcewise.sources.kb.source import KnowledgeBase
    else:
        import tantivy
    t1, c1 = time.perf_counter(), _cpu_s()
    if system == "sourcewise":
        n = len(KnowledgeBase(out / "kb.sqlite3", semantic=False).search(query, mode="lexical"))
    else:
        index = tantivy.Index.open(str(out / "tantivy"))
        n = len(_tantivy_hits(index, index.searcher(), query))
    ms, cpu_ms = (time.perf_counter() - t1) * 1000, (_cpu_s() - c1) * 1000
    return {"import_ms": (t1 - t0) * 1000, "ms": ms, "cpu_ms": cpu_ms, "hits": n}


def _spawn(*args: str) -> dict[str, float]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode:
        raise RuntimeError(f"{args}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


# -- queries -------------------------------------------------------------------------------------

_STOP = set("the and for with that this from are was were not but you your can all any has have its".split())


def make_queries(folder: Path, rng: random.Random) -> tuple[list[str], list[str]]:
    paras = [para for _, _, para in kbcorpus.chunks_of(folder)]
    short, long = [], []
    while len(long) < QUERIES:
        words = [w.lower() for w in re.findall(r"[A-Za-z]{3,}", rng.choice(paras)) if w.lower() not in _STOP]
        if len(words) >= 8:
            start = rng.randrange(len(words) - 7)
            short.append(" ".join(rng.sample(words, 2)))
            long.append(" ".join(words[start : start + 8]))
    return short, long


def _tantivy_hits(index: Any, searcher: Any, q: str) -> list[tuple[str, str]]:
    import tantivy

    query = index.parse_query(q, ["title", "heading", "body"], {"title": 4.0, "heading": 2.0})
    snippets = tantivy.SnippetGenerator.create(searcher, query, index.schema, "body")
    out = []
    for _, addr in searcher.search(query, 10).hits:
        doc = searcher.doc(addr)
        out.append((doc["body"][0], snippets.snippet_from_doc(doc).fragment()))
    return out


def _timed(
    fns: dict[str, Callable[[str], object]], queries: list[str]
) -> dict[str, tuple[float, float, float]]:
    """(p50, p99 wall ms, p50 CPU ms of the calling thread) per system. The CPU time is what a
    query costs whatever the machine's load: on a loaded machine a longer query is also more
    often pre-empted, which the wall time shows and the CPU time does not."""
    samples: dict[str, list[float]] = {k: [] for k in fns}
    cpu: dict[str, list[float]] = {k: [] for k in fns}
    for fn in fns.values():
        for q in queries[:5]:
            fn(q)
    for _ in range(2):
        for q in queries:
            for k, fn in fns.items():
                t0, c0 = time.perf_counter(), time.thread_time()
                fn(q)
                samples[k].append((time.perf_counter() - t0) * 1000)
                cpu[k].append((time.thread_time() - c0) * 1000)
    out = {}
    for k, s in samples.items():
        s.sort()
        out[k] = (statistics.median(s), s[int(len(s) * 0.99) - 1], statistics.median(cpu[k]))
    return out


# -- one size ------------------------------------------------------------------------------------


def one_size(n: int) -> tuple[list[str], dict[str, float]]:
    folder, note = kbcorpus.build(n, CACHE)
    rng = random.Random(n)
    short, long = make_queries(folder, rng)
    systems = ("sourcewise", "tantivy", "bm25s")
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        outs = {s: Path(tmp) / s for s in systems}
        for p in outs.values():
            p.mkdir()
        built = {s: _spawn("child", s, "build", str(folder), str(outs[s])) for s in systems}
        disk = {
            "sourcewise": _disk_mb(outs["sourcewise"]),
            "tantivy": _disk_mb(outs["tantivy"] / "tantivy"),
            "bm25s": _disk_mb(outs["bm25s"]),
        }
        firsts = {
            s: [_spawn("first", s, str(outs[s]), q) for q in short[:5]] for s in ("sourcewise", "tantivy")
        }
        times = _query_times(outs, short, long)
        unchanged = {
            s: _spawn("child", s, "update", str(folder), str(outs[s]))["seconds"]
            for s in ("sourcewise", "tantivy")
        }
        changed = _touch_one_percent(folder, rng)
        try:
            one_pct = {
                s: _spawn("child", s, "update", str(folder), str(outs[s])) for s in ("sourcewise", "tantivy")
            }
        finally:
            for path, text in changed.items():
                path.write_text(text, "utf-8")
    return _rows(n, note, built, disk, firsts, times, unchanged, one_pct, len(changed))


def _query_times(
    outs: dict[str, Path], short: list[str], long: list[str]
) -> dict[str, tuple[float, float, float]]:
    import bm25s
    import Stemmer
    import tantivy

    from sourcewise.sources.kb.source import KnowledgeBase

    kb = KnowledgeBase(outs["sourcewise"] / "kb.sqlite3", semantic=False)
    index = tantivy.Index.open(str(outs["tantivy"] / "tantivy"))
    searcher = index.searcher()
    retriever = bm25s.BM25.load(str(outs["bm25s"] / "bm25s"), load_corpus=True)
    stemmer = Stemmer.Stemmer("english")

    def bm25(q: str) -> object:
        tokens = bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False)
        docs, _ = retriever.retrieve(tokens, k=10, show_progress=False)
        return list(docs[0])

    out: dict[str, tuple[float, float, float]] = {}
    for label, queries in (("short", short), ("long", long)):
        got = _timed({
            "sourcewise": lambda q: kb.search(q, mode="lexical"),
            "tantivy": lambda q: _tantivy_hits(index, searcher, q),
            "bm25s": bm25,
        }, queries)  # fmt: skip
        out.update({f"{k} {label}": v for k, v in got.items()})
    kb.close()
    return out


def _touch_one_percent(folder: Path, rng: random.Random) -> dict[Path, str]:
    files = sorted(folder.rglob("*.md"))
    picked = rng.sample(files, max(1, len(files) // 100))
    before = {}
    for path in picked:
        text = path.read_text("utf-8")
        before[path] = text
        path.write_text(
            text + "\n## changed\n\nThis paragraph was added by the benchmark's 1% update.\n", "utf-8"
        )
    return before


def _rows(n: int, note: str, built: dict[str, dict[str, float]], disk: dict[str, float],
          firsts: dict[str, list[dict[str, float]]], times: dict[str, tuple[float, float, float]], unchanged: dict[str, float],
          one_pct: dict[str, dict[str, float]], files_changed: int) -> tuple[list[str], dict[str, float]]:  # fmt: skip
    sw, tv, bm = built["sourcewise"], built["tantivy"], built["bm25s"]
    rate = {s: b["chunks"] / b["seconds"] for s, b in built.items()}
    first = {s: statistics.median(x["ms"] for x in v) for s, v in firsts.items()}
    first_cpu = {s: statistics.median(x["cpu_ms"] for x in v) for s, v in firsts.items()}
    imports = {s: statistics.median(x["import_ms"] for x in v) for s, v in firsts.items()}
    r = {
        "index": rate["sourcewise"] / rate["tantivy"],
        "rss": sw["rss_mb"] / tv["rss_mb"],
        "disk": disk["sourcewise"] / disk["tantivy"],
        "short": times["sourcewise short"][0] / times["tantivy short"][0],
        "long": times["sourcewise long"][0] / times["tantivy long"][0],
        "first": first["sourcewise"] / first["tantivy"],
        "first_cpu": first_cpu["sourcewise"] / first_cpu["tantivy"],
        "one_pct": one_pct["sourcewise"]["seconds"] / one_pct["tantivy"]["seconds"],
        "index_cpu": (sw["chunks"] / sw["cpu_s"]) / (tv["chunks"] / tv["cpu_s"]),
        "short_cpu": times["sourcewise short"][2] / times["tantivy short"][2],
        "long_cpu": times["sourcewise long"][2] / times["tantivy long"][2],
    }

    def q(s: str) -> str:
        a, b = times[f"{s} short"], times[f"{s} long"]
        return f"{a[0]:.2f} / {a[1]:.2f} | {b[0]:.2f} / {b[1]:.2f}"

    lines = [
        f"**{n:,} chunks** ({note}; {sw['chunks']:,} chunks written by sourcewise, {tv['chunks']:,} by tantivy).", "",
        "| system | index chunks/s | peak RSS | on disk | short p50 / p99 ms | long p50 / p99 ms | first query, new process | unchanged re-index | 1% re-index |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| **sourcewise** | {rate['sourcewise']:,.0f} | {sw['rss_mb']:.0f} MB | {disk['sourcewise']:.0f} MB | {q('sourcewise')} "
        f"| {first['sourcewise']:.0f} ms | {unchanged['sourcewise']:.2f} s | {one_pct['sourcewise']['seconds']:.2f} s |",
        f"| tantivy (en_stem) | {rate['tantivy']:,.0f} | {tv['rss_mb']:.0f} MB | {disk['tantivy']:.0f} MB | {q('tantivy')} "
        f"| {first['tantivy']:.0f} ms | {unchanged['tantivy']:.2f} s | {one_pct['tantivy']['seconds']:.2f} s |",
        f"| bm25s | {rate['bm25s']:,.0f} | {bm['rss_mb']:.0f} MB | {disk['bm25s']:.0f} MB | {q('bm25s')} | | | |",
        f"| **ratio sourcewise / tantivy** | **{r['index']:.2f}x** | **{r['rss']:.2f}x** | **{r['disk']:.2f}x** "
        f"| **{r['short']:.2f}x** | **{r['long']:.2f}x** | **{r['first']:.2f}x** | | **{r['one_pct']:.2f}x** |",
        "", f"1% re-index: {files_changed} files changed of {n // kbcorpus.PER_FILE:,}. First query in a new "
        f"process: opening and the query, median of 5 processes; the import before it took "
        f"{imports['sourcewise']:.0f} ms for sourcewise (the package), {imports['tantivy']:.0f} ms for tantivy.",
        f"CPU time, which the machine's load does not stretch: indexing {sw['chunks'] / sw['cpu_s']:,.0f} vs "
        f"{tv['chunks'] / tv['cpu_s']:,.0f} chunks per CPU-second (**{r['index_cpu']:.2f}x**, every thread); "
        f"query p50 short {times['sourcewise short'][2]:.2f} vs {times['tantivy short'][2]:.2f} ms "
        f"(**{r['short_cpu']:.2f}x**), long {times['sourcewise long'][2]:.2f} vs {times['tantivy long'][2]:.2f} ms "
        f"(**{r['long_cpu']:.2f}x**) (the calling thread); first query {first_cpu['sourcewise']:.1f} vs "
        f"{first_cpu['tantivy']:.1f} ms (**{r['first_cpu']:.2f}x**, every thread).",
    ]  # fmt: skip
    return lines, r


def scale() -> str:
    sizes = [int(x) for x in os.environ.get("KB_SIZES", "10000,100000").split(",") if x]
    lines = [
        "Real text: paragraphs of this machine's documentation (Vim help, man pages in every installed "
        "language, info pages, /usr/share/doc, Python docstrings; `benchmarks/kbcorpus.py`), 20 per "
        f"Markdown file. {QUERIES} short (2 words) and {QUERIES} long (8 words) queries from the corpus' "
        "words, top 10 with bodies and snippets; query times in ms, 2 rounds in turn.", "",
    ]  # fmt: skip
    for n in sizes:
        rows, _ = one_size(n)
        lines += [*rows, ""]
    return "\n".join(lines)


if __name__ == "__main__":
    mode, *rest = sys.argv[1:]
    if mode == "child":
        result = child(rest[0], rest[1], Path(rest[2]), Path(rest[3]))
    elif mode == "first":
        result = first_query(rest[0], Path(rest[1]), rest[2])
    else:
        print(scale())
        sys.exit(0)
    print(json.dumps(result))
