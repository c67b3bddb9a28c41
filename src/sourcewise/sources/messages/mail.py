"""An mbox file or a Maildir as an email source, searched in Gmail's syntax.

``budget from:sarah to:team subject:aurora after:2025/01/15 before:2025/02/01 has:attachment``

Filters follow Gmail's search operators (https://support.google.com/mail/answer/7190):

- ``from:`` / ``to:`` a name or address, or part of one (``to:`` looks at To and Cc);
- ``subject:`` words that must all be in the subject (Korean particles do not matter);
- ``after:D`` keeps mail **on or after** day D, ``before:D`` mail **before** D, as Gmail does;
  D is ``2025/01/15`` or ``2025-01-15`` (a month ``2025-01`` or a year means its first day), or
  seconds since the epoch. Days are calendar days in the ``timezone`` option; mail without a Date
  header never passes a date filter;
- ``has:attachment``; ``label:`` / ``in:`` a Maildir folder (``inbox`` is the top folder,
  ``anywhere`` every folder). An mbox has no folders: there they are warnings.

Several values of one filter keep a message that matches any of them; different filters all apply.
The index is stored under ``state_dir/exports`` (``cache = false``: in memory) and rebuilt when
the mailbox changes. Each hit carries its thread (``meta["thread_id"]``, the root message id from
References or In-Reply-To, and ``meta["thread_subject"]``). Locations are ``mid:`` URLs (RFC 2392).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote
from zoneinfo import ZoneInfo

from pydantic import Field

from sourcewise import access
from sourcewise.models import Hit, SourceQuery, SourceResult
from sourcewise.planning import syntax as _syntax
from sourcewise.sources._fts import FtsIndex, matching_rows
from sourcewise.sources.base import Names
from sourcewise.sources.filters import ParsedQuery
from sourcewise.sources.messages.exports import (
    ExportCodec,
    ExportSource,
    MessageOptions,
    date_span,
    day_bounds,
    open_export,
    snippet,
)
from sourcewise.sources.messages.mailbox import MailboxData, MailRecord, read_mailbox, signature
from sourcewise.text.analyze import analyze

__all__ = ["MailOptions", "MailSource"]

TEXT_CHARS = 6_000
_REPLY_PREFIXES = ("re:", "fw:", "fwd:", "aw:", "답장:", "회신:", "전달:", "re :", "fw :")


class MailOptions(MessageOptions):
    """Mail takes the message-export options (``timezone``, ``cache``) and the mailbox's owner."""

    owner: Names = Field(
        default_factory=list,
        description="whose mailbox it is: the names [access] users carry (an e-mail, a login, "
        "group:NAME); over the network doors only they find its messages. Empty: everyone the source "
        "is open to",
    )


def _owner_mark(owner: list[str]) -> int:
    """The owner as a number in the export's signature: a new owner rebuilds the stored index."""
    return int.from_bytes(hashlib.sha256("\n".join(owner).encode()).digest()[:6], "big")


@dataclass
class _Loaded:
    data: MailboxData
    index: FtsIndex
    signature: tuple[int, ...]
    thread_ids: list[str]
    thread_subjects: dict[str, str]
    newest: list[int]
    _subject_words: dict[int, frozenset[str]] = field(default_factory=dict)

    def subject_words(self, row: int) -> frozenset[str]:
        """The analyzed words of a record's subject, for ``subject:`` (worked out when first asked)."""
        words = self._subject_words.get(row)
        if words is None:
            words = self._subject_words[row] = frozenset(analyze(self.data.records[row].subject))
        return words


@dataclass
class _Filter:
    senders: list[str] | None = None
    recipients: list[str] | None = None
    subjects: list[set[str]] | None = None
    folders: set[str] | None = None
    start: date | None = None
    end: date | None = None
    attachment: bool = False
    warnings: list[str] = field(default_factory=list)


def base_subject(subject: str) -> str:
    """``Re: Fwd: 회신: Budget`` -> ``Budget``."""
    text = subject.strip()
    while True:
        low = text.casefold()
        prefix = next((p for p in _REPLY_PREFIXES if low.startswith(p)), None)
        if prefix is None:
            return text
        text = text[len(prefix) :].lstrip()


def _threads(records: list[MailRecord]) -> tuple[list[str], dict[str, str]]:
    """Each record's thread id (the root message id) and each thread's subject."""
    by_id = {r.message_id: r for r in records if r.message_id}
    ids: list[str] = []
    for i, r in enumerate(records):
        node, hops = r, 0
        while node.in_reply_to and not node.references and node.in_reply_to in by_id and hops < 100:
            node, hops = by_id[node.in_reply_to], hops + 1
        root = (node.references[0] if node.references else node.in_reply_to) or node.message_id
        ids.append(root or f"{r.folder}/{r.key}#{i}")
    subjects: dict[str, str] = {}
    for i in sorted(range(len(records)), key=lambda i: records[i].time or datetime.max.replace(tzinfo=UTC)):
        root_record = by_id.get(ids[i])
        subjects.setdefault(ids[i], base_subject((root_record or records[i]).subject))
    return ids, subjects


def _dump(data: MailboxData) -> dict[str, Any]:
    return {
        "kind": data.kind,
        "folders": data.folders,
        "skipped": data.skipped,
        "size": data.size,
        "records": [
            [r.folder, r.key, r.message_id, r.subject, r.sender, r.sender_name, r.recipients,
             r.time.isoformat() if r.time else None, r.body, list(r.attachments), r.in_reply_to,
             list(r.references)]
            for r in data.records
        ],
    }  # fmt: skip


def _load(raw: Any) -> MailboxData:
    records = [
        MailRecord(str(f), str(k), mid, str(subj), str(snd), str(name), str(rcpt),
                   datetime.fromisoformat(t) if t else None, str(body), tuple(att), irt, tuple(refs))
        for f, k, mid, subj, snd, name, rcpt, t, body, att, irt, refs in raw["records"]
    ]  # fmt: skip
    return MailboxData(str(raw["kind"]), records, list(raw["folders"]), int(raw["skipped"]), int(raw["size"]))


def _rows(data: MailboxData) -> Iterator[tuple[int, tuple[str, str, str]]]:
    for i, r in enumerate(data.records):
        people = " ".join([r.sender, r.recipients, *r.attachments])
        yield i, (" ".join(analyze(r.subject)), " ".join(analyze(r.body)), " ".join(analyze(people)))


CODEC = ExportCodec("mail", ("subject", "body", "people"), (3.0, 1.0, 0.5), _dump, _load)


def _build(source: str, path: Path, state_dir: Path | None, owner: list[str]) -> _Loaded:
    sig = (*signature(path), _owner_mark(owner))
    codec = CODEC
    if owner:  # every message is the owner's: stored as its readers, applied inside the query
        mine = access.named(owner)
        codec = replace(CODEC, readers=lambda data: dict.fromkeys(range(len(data.records)), mine))
    data, index = open_export(codec, path, sig, state_dir, lambda: read_mailbox(source, path), _rows)
    records = data.records
    thread_ids, subjects = _threads(records)
    oldest = datetime.min.replace(tzinfo=UTC)
    newest = sorted(range(len(records)), key=lambda i: records[i].time or oldest, reverse=True)
    return _Loaded(data, index, sig, thread_ids, subjects, newest)


def _gmail_day(value: str) -> date | None:
    if value.isascii() and value.isdigit() and len(value) >= 9:
        try:
            return datetime.fromtimestamp(int(value), UTC).date()
        except (OverflowError, ValueError, OSError):
            return None
    span = date_span(value)
    return span[0] if span else None


class MailSource(ExportSource[_Loaded]):
    """Messages of an mbox or a Maildir, indexed once per instance (FTS5, BM25)."""

    type = "mail"
    kind = "email"
    authority = "email"
    syntax = staticmethod(_syntax.email)
    filters: ClassVar[frozenset[str]] = frozenset(
        {"from", "to", "subject", "after", "before", "has", "label", "in"}
    )
    Options = MailOptions

    async def _load(self) -> _Loaded:
        path = self.options.require_path(self.name)

        assert isinstance(self.options, MailOptions)
        owner = self.options.owner
        state = self.settings.state_dir if self.options.cache else None
        return await self._cache.get(
            self.name, path, lambda p: (*signature(p), _owner_mark(owner)),
            lambda: _build(self.name, path, state, owner), self.run,
        )

    def _filter(self, parsed: ParsedQuery, data: MailboxData) -> _Filter:
        flt = _Filter()
        for key, value in parsed.filters:
            fold = value.strip().casefold()
            if key == "from":
                flt.senders = [*(flt.senders or []), fold]
            elif key == "to":
                flt.recipients = [*(flt.recipients or []), fold]
            elif key == "subject":
                flt.subjects = [*(flt.subjects or []), set(analyze(value))]
            elif key in ("after", "before"):
                day = _gmail_day(value.strip())
                if day is None:
                    flt.warnings.append(f"{self.name}: {key}:{value} is not a date like 2025/01/15; ignored")
                elif key == "after":
                    flt.start = max(flt.start or day, day)
                else:
                    flt.end = min(flt.end or day, day)
            elif key == "has" and fold == "attachment":
                flt.attachment = True
            elif key in ("label", "in"):
                self._folder(fold, data, flt)
            else:
                flt.warnings.append(
                    f"{self.name}: filter '{key}:{value}' is not supported by mail sources; ignored"
                )
        return flt

    def _folder(self, fold: str, data: MailboxData, flt: _Filter) -> None:
        if data.kind == "mbox":
            flt.warnings.append(f"{self.name}: an mbox has no folders; 'label:{fold}' ignored")
            return
        if fold in ("anywhere", "all"):
            return
        known = {f.casefold(): f for f in data.folders}
        want = fold.lstrip(".").replace("/", ".")
        if want not in known:
            flt.warnings.append(f"{self.name}: no folder {fold!r}; folders: {', '.join(data.folders)}")
        flt.folders = (flt.folders or set()) | {want}

    @staticmethod
    def _keep(r: MailRecord, loaded: _Loaded, row: int, flt: _Filter, bounds: tuple[float, float]) -> bool:
        if flt.senders is not None and not any(s in r.sender.casefold() for s in flt.senders):
            return False
        if flt.recipients is not None and not any(s in r.recipients.casefold() for s in flt.recipients):
            return False
        if flt.subjects is not None and not any(want <= loaded.subject_words(row) for want in flt.subjects):
            return False
        if flt.folders is not None and r.folder.casefold() not in flt.folders:
            return False
        if flt.attachment and not r.attachments:
            return False
        if flt.start or flt.end:
            return r.time is not None and bounds[0] <= r.time.timestamp() < bounds[1]
        return True

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        parsed, warnings = self.parse(query)
        loaded = await self._load()
        flt = self._filter(parsed, loaded.data)
        warnings += flt.warnings
        assert isinstance(self.options, MailOptions)
        bounds = day_bounds(flt.start, flt.end, ZoneInfo(self.options.timezone))
        want = max(1, min(limit or self.options.limit, 200))
        words = [*parsed.phrases, *parsed.terms, *analyze(parsed.text)]
        records = loaded.data.records
        hits: list[Hit] = []

        def text_of(i: int) -> str:
            return f"{records[i].subject}\n{records[i].body}"

        readers = access.readers()  # the door's user: the owner's mail is theirs only
        for row, score in matching_rows(loaded.index, parsed, lambda: loaded.newest, text_of, readers):
            if self._keep(records[row], loaded, row, flt, bounds):
                hits.append(self._hit(loaded, row, score or 1.0 / (1 + len(hits)), words))
                if len(hits) >= want:
                    break
        if loaded.data.skipped:
            warnings.append(f"{self.name}: {loaded.data.skipped} unreadable message(s) skipped")
        return self.result(query, hits, warnings)

    def location(self, row: int, r: MailRecord) -> str:
        """``mid:<message-id>`` (RFC 2392), or ``mail://FOLDER/KEY`` for mail without a Message-ID."""
        if r.message_id:
            return "mid:" + quote(r.message_id, safe="@!$&'()*+,;=:._~-")
        # A Maildir file name that is not UTF-8 is kept as Python keeps it (surrogate escapes) and
        # percent-encoded here byte for byte.
        return f"mail://{quote(r.folder, safe='')}/{quote(r.key, safe='', errors='surrogateescape')}"

    def _hit(self, loaded: _Loaded, row: int, score: float, words: list[str]) -> Hit:
        r = loaded.data.records[row]
        thread = loaded.thread_ids[row]
        meta = {
            "from": r.sender,
            "to": r.recipients[:500],
            "folder": r.folder,
            "thread_id": thread,
            "thread_subject": loaded.thread_subjects.get(thread, ""),
        }
        if r.message_id:
            meta["message_id"] = r.message_id
        if r.attachments:
            meta["attachments"] = ", ".join(r.attachments)
        return Hit(
            title=r.subject or "(no subject)",
            location=self.location(row, r),
            snippet=snippet(r.body or r.subject, words),
            text=r.body[:TEXT_CHARS],
            source=self.name,
            kind=self.kind,
            authority=self.authority,
            score=score,
            author=r.sender_name or None,
            timestamp=r.time,
            meta=meta,
        )

    def _summary(self, loaded: _Loaded) -> dict[str, Any]:
        data = loaded.data
        times = [r.time for r in data.records if r.time is not None]
        detail = (
            f"{data.kind}: {len(data.records)} messages in {len(data.folders)} folder(s), "
            f"{len(set(loaded.thread_ids))} threads, {data.size:,} bytes"
        )
        if data.skipped:
            detail += f"; {data.skipped} unreadable skipped"
        return {"items": len(data.records), "updated": max(times, default=None), "detail": detail}
