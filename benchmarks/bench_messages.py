"""Mail and Slack sources: one index build, then query latency, on 10,000 generated messages.

The mbox is written with the ``mailbox`` module (a third of the subjects MIME-encoded Korean, a
quarter of the messages replies); the Slack export is a folder in the documented shape. References
measured in the same run: for the build, the standard library alone reading and parsing every
message (``mailbox`` + ``email`` with ``policy.default``), the floor of any mbox reader; for queries,
a linear scan (case-folded substring test of every word over every message), what a search without
an index does.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import mailbox
import random
import statistics
import tempfile
import time
from email import policy
from email.parser import BytesParser
from pathlib import Path

from sourcewise.config import Settings
from sourcewise.models import SourceQuery
from sourcewise.sources.messages.mail import MailOptions, MailSource
from sourcewise.sources.messages.slack import SlackOptions, SlackSource

N = 10_000
EN = "aurora budget deploy cluster review migration latency invoice roadmap hiring vendor contract".split()
KO = "배포를 예산이 절차는 회의에서 검토를 일정이 장애가 서버를 계약은 고객에게".split()
QUERIES = [
    "aurora budget", "배포 절차", "migration latency", "예산 검토", "invoice from:user7",
    "roadmap after:2025/03/01", "hiring has:attachment", "계약 subject:회의", "cluster -vendor", "고객 장애",
]  # fmt: skip
SLACK_QUERIES = [
    "aurora budget", "배포 절차", "migration in:#c3", "예산 from:user7", "cluster is:thread",
    "roadmap after:2025-03-01", "hiring has:file", "계약 on:2025-02-10", "latency -vendor", "고객 장애",
]  # fmt: skip


# A Zipf-shaped vocabulary of 5,000 words, the query words at ranks 200-223 (content words, each in
# about 5% of the messages; ranks below 200 play the function words): a few words are in most
# messages, most words in few, as in real mail.
VOCAB = [f"w{i}" for i in range(200)] + EN + KO + [f"w{i}" for i in range(200, 5000 - len(EN + KO))]
CUM = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(VOCAB))))


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(VOCAB, cum_weights=CUM, k=n))


def write_mbox(path: Path, rng: random.Random) -> None:
    box = mailbox.mbox(path)
    box.lock()
    for i in range(N):
        subject = _words(rng, 4)
        if i % 3 == 0:
            subject = "=?UTF-8?B?" + base64.b64encode(subject.encode()).decode() + "?="
        reply = f"In-Reply-To: <m{i - 1}@x>\nReferences: <m{i - 1}@x>\n" if i % 4 == 1 else ""
        day = 1 + i % 28
        head = (
            f"From: User {i % 50} <user{i % 50}@x.example>\nTo: team@x.example\nSubject: {subject}\n"
            f"Date: Mon, {day:02d} {['Jan', 'Feb', 'Mar', 'Apr'][i % 4]} 2025 10:00:00 +0000\n"
            f"Message-ID: <m{i}@x>\n{reply}MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n"
        )
        box.add((head + "\n" + _words(rng, 120) + "\n").encode())
    box.flush()
    box.unlock()
    box.close()


def write_slack(root: Path, rng: random.Random) -> None:
    root.mkdir()
    users = [{"id": f"U{u}", "name": f"user{u}", "profile": {"real_name": f"User {u}"}} for u in range(50)]
    (root / "users.json").write_text(json.dumps(users))
    (root / "channels.json").write_text(json.dumps([{"id": f"C{c}", "name": f"c{c}"} for c in range(10)]))
    days: dict[str, list[dict[str, object]]] = {}
    for i in range(N):
        ts = 1735700000 + i * 900
        day = time.strftime("%Y-%m-%d", time.gmtime(ts))
        msg: dict[str, object] = {"type": "message", "user": f"U{i % 50}", "ts": f"{ts}.000100"}
        msg["text"] = _words(rng, 25)
        if i % 5 == 1:
            msg["thread_ts"] = f"{ts - 900}.000100"
        if i % 40 == 0:
            msg["files"] = [{"id": f"F{i}", "name": "sheet.xlsx"}]
        days.setdefault(f"c{(i // 5) % 10}/{day}.json", []).append(msg)
    for name, msgs in days.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(json.dumps(msgs, ensure_ascii=False))


def stdlib_read(path: Path) -> int:
    parser = BytesParser(policy=policy.default)
    box = mailbox.mbox(path, create=False)
    count = 0
    for key in box.iterkeys():
        msg = parser.parsebytes(box.get_bytes(key))
        count += bool(msg.get_body(preferencelist=("plain",)).get_content())  # type: ignore[union-attr]
    return count


def scan(texts: list[str], query: str) -> int:
    words = [w.casefold() for w in query.split() if ":" not in w and not w.startswith("-")]
    return sum(1 for t in texts if any(w in t for w in words))


def _ms(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.95) - 1] * 1000


def _queries(src: MailSource | SlackSource, queries: list[str], kind: str) -> list[float]:
    async def go() -> list[float]:
        out = []
        for _ in range(20):
            for q in queries:
                start = time.perf_counter()
                await src.search(SourceQuery(source=kind, mode="keyword", query=q))  # type: ignore[arg-type]
                out.append(time.perf_counter() - start)
        return out

    return asyncio.run(go())


def _build(src: MailSource | SlackSource) -> float:
    start = time.perf_counter()
    asyncio.run(src.info())
    return time.perf_counter() - start


def run() -> str:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        mbox, export = Path(tmp) / "inbox.mbox", Path(tmp) / "slack"
        write_mbox(mbox, rng)
        write_slack(export, rng)
        start = time.perf_counter()
        stdlib_read(mbox)
        floor = time.perf_counter() - start
        settings = Settings(state_dir=Path(tmp) / "state")
        mail = MailSource("mail", MailOptions(path=mbox), settings)
        mail_build = _build(mail)  # reads, analyzes and stores STATE_DIR/exports/mail-HASH.sqlite3
        mail_reopen = statistics.median(
            _build(MailSource("mail", MailOptions(path=mbox), settings)) for _ in range(3)
        )
        texts = [f"{r.subject}\n{r.body}".casefold() for r in mail._cache.value.data.records]  # type: ignore[union-attr]
        mail_q = _queries(mail, QUERIES, "email")
        scan_q = []
        for _ in range(20):
            for q in QUERIES:
                t0 = time.perf_counter()
                scan(texts, q)
                scan_q.append(time.perf_counter() - t0)
        slack = SlackSource("slack", SlackOptions(path=export), settings)
        slack_build = _build(slack)
        slack_reopen = statistics.median(
            _build(SlackSource("slack", SlackOptions(path=export), settings)) for _ in range(3)
        )
        stored = {p.name.split("-")[0]: p.stat().st_size for p in (Path(tmp) / "state" / "exports").iterdir()}
        slack_q = _queries(slack, SLACK_QUERIES, "chat")
        size = mbox.stat().st_size
    (mp50, mp95), (sp50, sp95), (cp50, cp95) = _ms(mail_q), _ms(scan_q), _ms(slack_q)
    return "\n".join(
        [
            f"{N:,} messages each; queries: 10 (with and without filters) x 20 rounds.\n",
            "| step | time | per second | reference (same run) | ratio |",
            "|---|---|---|---|---|",
            f"| mail: read + index a {size / 1e6:.1f} MB mbox | {mail_build:.2f} s | "
            f"{N / mail_build:,.0f} msg/s | stdlib parse alone {floor:.2f} s | {mail_build / floor:.2f}x |",
            f"| mail: reopen the stored index (new source, median of 3) | {mail_reopen:.2f} s | | first build "
            f"{mail_build:.2f} s | {mail_reopen / mail_build:.3f}x |",
            f"| slack: read + index an export folder | {slack_build:.2f} s | {N / slack_build:,.0f} msg/s | | |",
            f"| slack: reopen the stored index (new source, median of 3) | {slack_reopen:.2f} s | | first build "
            f"{slack_build:.2f} s | {slack_reopen / slack_build:.3f}x |",
            f"| mail query p50 / p95 | {mp50:.2f} / {mp95:.2f} ms | | linear scan {sp50:.2f} / {sp95:.2f} ms "
            f"| {mp50 / sp50:.2f}x |",
            f"| slack query p50 / p95 | {cp50:.2f} / {cp95:.2f} ms | | | |",
            "",
            f"Stored index files: mail {stored.get('mail', 0) / 1e6:.1f} MB, slack {stored.get('slack', 0) / 1e6:.1f} MB.",
        ]
    )


if __name__ == "__main__":
    print(run())
