"""Code localisation: one pass vs the iterative loop (seed 004) vs plain BM25 over files (bm25s).

Two sets. **history**: this repository's own commits; each commit's subject is the task, the
``src/`` files it added or changed are the gold set, searched in a snapshot of that commit
(``git archive`` into a temporary folder) made a git repository whose history ends at the commit's
parent (``snapshot``: the loop's co-change step reads it; the commit itself is never visible);
commits whose subject names a file are left out.
**generated**: a repository whose code says other words than its tasks ("throttle" for "rate
limit"); each concept has an implementing file and a caller that uses the task's words and imports
it; the gold set is both. Recall@k = gold files in the top k / gold files; medians and means.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import tempfile
from collections import Counter
from functools import partial
from pathlib import Path

from sourcewise import retrieve
from sourcewise.config import load_settings
from sourcewise.core.analyze import analyze
from sourcewise.core.refine import allowed
from sourcewise.retrieve import DEFAULT_EXCLUDE
from sourcewise.sources.code import CodeOptions
from sourcewise.sources.codeindex import walk

ROOT = Path(__file__).resolve().parent.parent
CONCEPTS = [  # (task, code word, impl body words)
    ("Add rate limiting to API endpoints", "throttle", "bucket tokens refill per_minute allow"),
    ("Cache invalidation when a user profile changes", "memo", "evict stale entries ttl purge"),
    ("Retry failed payment webhooks with exponential backoff", "reattempt", "delay doubling jitter attempts"),
    ("Send a password reset email", "passphrase", "renewal link mailer dispatch"),
    ("Upload files to object storage", "blob", "ingest bucket put multipart"),
    ("Schedule nightly report generation", "cron", "digest compile tick"),
    ("Search autocomplete suggestions", "typeahead", "prefix trie candidates"),
    ("Audit log of admin actions", "journal", "trail record operator entries"),
]
FILLER = "ledger invoice currency shipment parcel warehouse coupon basket wishlist review rating tax".split()


def _generated(root: Path) -> list[tuple[str, set[str]]]:
    tasks = []
    for i, (task, word, body) in enumerate(CONCEPTS):
        impl = f"src/shop/{word}.py"
        names = body.split()
        (root / "src/shop").mkdir(parents=True, exist_ok=True)
        (root / impl).write_text(
            f"class {word.title()}:\n"
            + "".join(f"    def {n}(self):\n        return self.{word}_{n}\n" for n in names)
        )
        caller = f"src/shop/handlers_{i}.py"
        words = " ".join(w for w in analyze(task) if len(w) > 3)
        (root / caller).write_text(
            f'"""Handlers: {words}."""\nfrom shop.{word} import {word.title()}\n\n\n'
            f"def handle_{i}(request):\n    return {word.title()}().{names[0]}()\n"
        )
        tasks.append((task, {impl, caller}))
    for j, w in enumerate(FILLER * 3):
        (root / f"src/shop/{w}_{j}.py").write_text(f"def {w}_{j}(order):\n    return order.{w} + {j}\n")
    return tasks


_DOTTED = re.compile(r"[A-Za-z_]\.[A-Za-z_]")  # core.text, _sync.py; not 0.74x or 127.0.0.1


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout


def _history() -> list[tuple[str, str, set[str]]]:
    out = []
    for line in _git("log", "--no-merges", "--format=%H%x09%s").splitlines():
        sha, subject = line.split("\t", 1)
        changed = _git("diff-tree", "--no-commit-id", "--name-only", "-r", "--diff-filter=AM", "--root", sha)
        gold = {p for p in changed.split() if p.startswith("src/") and p.endswith(".py")}
        names = {Path(p).name for p in changed.split()} | {Path(p).stem for p in changed.split() if "." in p}
        words = set(subject.replace(",", " ").replace(";", " ").split())
        dotted = [w for w in words if _DOTTED.search(w) and w.lower() not in ("e.g.", "i.e.")]
        if gold and not (words & names) and not dotted:  # a dotted name may be a file or module
            out.append((sha, subject, gold))
    return out


def snapshot(repo: Path, sha: str, snap: Path) -> Path:
    """The tree of commit ``sha`` of ``repo`` in ``snap`` (``git archive``), made a git repository
    whose history ends at ``sha``'s parent: what co-change may read. The commit itself (and anything
    after it) is unreachable there: ``git log`` shows only its ancestors. The objects are shared
    read-only through ``objects/info/alternates`` (nothing is copied); only one ref exists."""
    snap.mkdir(parents=True)
    run = partial(subprocess.run, capture_output=True, check=True)
    tree = run(["git", "-C", str(repo), "archive", sha]).stdout
    run(["tar", "-x", "-C", str(snap)], input=tree)
    run(["git", "init", "-q", str(snap)])
    common = Path(run(["git", "-C", str(repo), "rev-parse", "--git-common-dir"], text=True).stdout.strip())
    objects = (repo / common if not common.is_absolute() else common) / "objects"
    (snap / ".git/objects/info/alternates").write_text(f"{objects.resolve()}\n")
    parent = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "-q", f"{sha}^"], capture_output=True, text=True
    ).stdout.strip()
    if parent:  # a root commit has no history before it
        run(["git", "-C", str(snap), "update-ref", "refs/heads/snapshot", parent])
        run(["git", "-C", str(snap), "symbolic-ref", "HEAD", "refs/heads/snapshot"])
    return snap


def _files(root: Path) -> dict[str, str]:
    """The text files the code source indexes (the same walk: .gitignore, size limit), less the
    default exclusions every method gets."""
    opts = CodeOptions()
    found = walk(
        root,
        include=None,
        exclude=None,
        gitignore=True,
        max_bytes=opts.max_file_bytes,
        max_files=opts.max_files,
    )
    out = {}
    for c in found.files:
        data = c.path.read_bytes()
        if b"\0" not in data[:8192] and allowed(c.rel, (), DEFAULT_EXCLUDE):
            out[c.rel] = data.decode("utf-8", errors="replace")
    return out


def _bm25(root: Path, task: str, k: int) -> list[str]:
    import bm25s  # the bench extra; imported here so that the tests can use ``snapshot`` without it

    texts = _files(root)
    files = sorted(texts)
    corpus = [analyze(f + " " + texts[f]) for f in files]
    model = bm25s.BM25()
    model.index(corpus, show_progress=False)
    docs, _ = model.retrieve([analyze(task) or ["x"]], k=min(k, len(files)), show_progress=False)
    return [files[int(i)] for i in docs[0]]


def _ranked(root: Path, task: str, cycles: int, state: Path) -> tuple[list[str], list[str]]:
    """The files ``retrieve`` ranks, best first, and those its co-change step brought in."""
    found = retrieve(
        task, sources=[f"code:{root}"], max_cycles=cycles, exclude=list(DEFAULT_EXCLUDE),
        settings=load_settings(state_dir=state),
    )  # fmt: skip
    ranked = list(dict.fromkeys(c.hit.path for c in found.considered if c.hit.path))
    cochanged = [
        c.hit.path for c in found.considered if c.hit.path and c.hit.meta.get("found") == "co-change"
    ]
    return ranked, cochanged


def _recall(ranked: list[str], gold: set[str], k: int) -> float:
    return len(set(ranked[:k]) & gold) / len(gold)


def _score(cases: list[tuple[Path, str, set[str]]], state: Path) -> dict[str, list[float]]:
    """Recall per method and k, per task; and for the loop: the most any re-ranking of all it kept
    could reach at 5 (``ceiling@5``), and the files co-change brought in and how many were gold."""
    out: dict[str, list[float]] = {}
    for root, task, gold in cases:
        loop, cochanged = _ranked(root, task, 3, state)
        runs = {"BM25 (bm25s)": _bm25(root, task, 10), "one pass": _ranked(root, task, 1, state)[0]}
        runs["loop (3 cycles)"] = loop
        for name, ranked in runs.items():
            for k in (5, 10):
                out.setdefault(f"{name}@{k}", []).append(_recall(ranked, gold, k))
        out.setdefault("ceiling@5", []).append(min(5, len(set(loop) & gold)) / len(gold))
        out.setdefault("co-change added", []).append(len(cochanged))
        out.setdefault("co-change gold", []).append(len(set(cochanged) & gold))
    return out


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.3f}x ({(a - b) / b * 100:+.1f}%)" if b else "n/a"


def _table(title: str, scores: dict[str, list[float]], golds: list[int]) -> str:
    sizes = ", ".join(f"{n} of {size}" for size, n in sorted(Counter(golds).items()))
    rows = [
        f"**{title}** ({len(golds)} tasks; gold files per task: {sizes}; median {statistics.median(golds)})\n",
        "| method | recall@5 mean | recall@10 mean | recall@5 median | recall@10 median |",
        "|---|---|---|---|---|",
    ]
    for name in ("BM25 (bm25s)", "one pass", "loop (3 cycles)"):
        r5, r10 = scores[f"{name}@5"], scores[f"{name}@10"]
        rows.append(
            f"| {name} | {statistics.mean(r5):.3f} | {statistics.mean(r10):.3f} | {statistics.median(r5):.3f}"
            f" | {statistics.median(r10):.3f} |"
        )
    mean = {key: statistics.mean(values) for key, values in scores.items()}
    for k in (5, 10):
        loop = mean[f"loop (3 cycles)@{k}"]
        rows.append(
            f"\nrecall@{k}: loop / one pass {_ratio(loop, mean[f'one pass@{k}'])}; "
            f"loop / BM25 {_ratio(loop, mean[f'BM25 (bm25s)@{k}'])}"
        )
    ceiling = mean["ceiling@5"]
    rows.append(
        f"\nceiling: every gold file the loop kept ranked first would give recall@5 {ceiling:.3f}, "
        f"{_ratio(ceiling, mean['one pass@5'])} over one pass"
    )
    added, hits = sum(scores["co-change added"]), sum(scores["co-change gold"])
    tasks = sum(1 for n in scores["co-change added"] if n)
    rows.append(f"\nco-change: {added:.0f} files brought in over {tasks} tasks, {hits:.0f} of them gold")
    return "\n".join(rows)


def run() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        history = _history()
        assert history, "no commit of this repository qualified"
        cases = []
        for sha, subject, gold in history:
            cases.append((snapshot(ROOT, sha, base / sha[:10]), subject, gold))
        head = _git("rev-parse", "--short", "HEAD").strip()
        first = _table(
            f"history (commits up to {head})", _score(cases, base / "state"), [len(g) for _, _, g in cases]
        )
        gen = base / "generated"
        tasks = _generated(gen)
        second = _table(
            "generated", _score([(gen, t, g) for t, g in tasks], base / "state"), [len(g) for _, g in tasks]
        )
    return f"{first}\n\n{second}"
