"""A Slack workspace export (zip or folder) as a chat source, searched in Slack's own syntax.

``aurora in:#engineering from:sarah after:2025-01-15 is:thread has:file "exact phrase" -draft``

Filters follow Slack's search modifiers ("Search in Slack", https://slack.com/help/articles/202528808):

- ``from:`` a user name, display name, real name, one word of one (``sarah`` finds Sarah Kim), an id
  or a mention ``<@U123>``; ``in:`` a channel as ``#name``, ``name`` or its id;
- ``after:D`` and ``before:D`` **exclude day D itself**, as Slack's do (``after:2025-01-15`` starts on
  the 16th); ``on:D`` / ``during:D`` keep D. D is a day ``2025-01-15``, a month ``2025-01`` or a year
  ``2025`` (``after:2025-01`` starts in February). Days are calendar days in the ``timezone`` option;
- ``is:thread`` (a thread's parent or a reply), ``has:file``, ``has:link``.

Several values of one filter keep a message that matches any of them; different filters all apply.
A filter this source cannot honour (``is:saved``, ``label:``...) comes back as a warning.

A hit is the best message of a thread, with the thread (parent and replies, in order) as its text:
a thread is found once. The last reply of a thread is classed ``thread_conclusion``; every other
message ``chat``. Locations are permalinks ``https://WORKSPACE.slack.com/archives/C123/p1737000000000200``
when ``workspace_url`` is set, otherwise ``slack://CHANNEL/TS``. The index is stored under
``state_dir/exports`` (``cache = false``: in memory) and rebuilt when the export changes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote, urlsplit
from zoneinfo import ZoneInfo

from pydantic import Field, field_validator

from sourcewise import access
from sourcewise.models import Authority, Hit, SourceQuery, SourceResult
from sourcewise.planning import syntax as _syntax
from sourcewise.sources._fts import FtsIndex, matching_rows
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
from sourcewise.sources.messages.slack_export import SlackExport, SlackMessage, SlackUser, read_export
from sourcewise.text.analyze import analyze

__all__ = ["SlackOptions", "SlackSource"]

THREAD_CONTEXT_MESSAGES = 30
THREAD_CONTEXT_CHARS = 6_000


class SlackOptions(MessageOptions):
    workspace_url: str | None = Field(
        default=None, description="https://WORKSPACE.slack.com: hits get Slack permalinks"
    )

    @field_validator("workspace_url")
    @classmethod
    def _workspace(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value.strip())
        if parts.scheme != "https" or not parts.hostname or parts.username or parts.password:
            raise ValueError("give the workspace as https://WORKSPACE.slack.com")
        return f"https://{parts.hostname}"


@dataclass
class _Loaded:
    export: SlackExport
    index: FtsIndex
    signature: tuple[int, ...]
    thread_of: list[tuple[str, str]]
    threads: dict[tuple[str, str], list[int]]
    newest: list[int]


@dataclass
class _Filter:
    user_ids: set[str] | None = None
    authors: set[str] | None = None
    channels: set[str] | None = None
    start: date | None = None
    end: date | None = None
    thread: bool = False
    file: bool = False
    link: bool = False
    warnings: list[str] = field(default_factory=list)


def _signature(path: Path) -> tuple[int, ...]:
    """What changes when the export does: the zip, or the folder, its channels.json and each
    conversation folder (a new day file changes its folder)."""
    stats = [path.stat()]
    if path.is_dir():
        if (path / "channels.json").exists():
            stats.append((path / "channels.json").stat())
        with os.scandir(path) as entries:
            stats.extend(e.stat() for e in sorted(entries, key=lambda e: e.name) if e.is_dir())
    return tuple(x for s in stats for x in (s.st_mtime_ns, s.st_size))


def _dump(export: SlackExport) -> dict[str, Any]:
    return {
        "users": [[u.id, u.name, u.real_name, u.display_name, u.email] for u in export.users.values()],
        "channel_ids": export.channel_ids,
        "members": {k: None if v is None else list(v) for k, v in export.members.items()},
        "messages": [
            [m.channel, m.channel_id, m.ts, m.time, m.user_id, m.author, m.text, m.thread_ts,
             m.reply_count, list(m.files)]
            for m in export.messages
        ],
        "counts": [export.skipped, export.day_files, export.bytes_read],
        "notes": export.notes,
    }  # fmt: skip


def _load(raw: Any) -> SlackExport:
    users = {str(u[0]): SlackUser(*(str(x) for x in u)) for u in raw["users"]}
    messages = [
        SlackMessage(str(ch), cid, str(ts), float(t), uid, str(author), str(text), tts, int(n), tuple(files))
        for ch, cid, ts, t, uid, author, text, tts, n, files in raw["messages"]
    ]
    skipped, day_files, bytes_read = (int(x) for x in raw["counts"])
    channel_ids = {str(k): str(v) for k, v in raw["channel_ids"].items()}
    members = {str(k): None if v is None else tuple(str(x) for x in v) for k, v in raw["members"].items()}
    notes = list(raw["notes"])
    return SlackExport(users, channel_ids, messages, skipped, day_files, bytes_read, notes, members)


def _readers(export: SlackExport) -> dict[int, tuple[str, ...]]:
    """rowid -> readers, for the messages of conversations not open to everyone."""
    by_folder = {c: export.readers(c) for c in {m.channel for m in export.messages}}
    return {i: r for i, m in enumerate(export.messages) if (r := by_folder[m.channel]) is not None}


def _threads(msgs: list[SlackMessage]) -> tuple[list[tuple[str, str]], dict[tuple[str, str], list[int]]]:
    threads: dict[tuple[str, str], list[int]] = {}
    thread_of: list[tuple[str, str]] = []
    for i, m in enumerate(msgs):
        key = (m.channel, m.thread_ts or m.ts)
        thread_of.append(key)
        threads.setdefault(key, []).append(i)
    for rows in threads.values():
        rows.sort(key=lambda r: msgs[r].time)
    return thread_of, threads


def _rows(export: SlackExport) -> Iterator[tuple[int, tuple[str, str]]]:
    msgs = export.messages
    thread_of, threads = _threads(msgs)
    for i, m in enumerate(msgs):
        first = threads[thread_of[i]][0]
        context = m.channel + ("" if first == i else " " + msgs[first].text)
        yield i, (" ".join(analyze(" ".join([m.text, *m.files]))), " ".join(analyze(context)))


CODEC = ExportCodec("slack", ("body", "context"), (1.0, 0.3), _dump, _load, _readers)


def _build(source: str, path: Path, state_dir: Path | None) -> _Loaded:
    signature = _signature(path)
    export, index = open_export(CODEC, path, signature, state_dir, lambda: read_export(source, path), _rows)
    msgs = export.messages
    thread_of, threads = _threads(msgs)
    newest = sorted(range(len(msgs)), key=lambda r: -msgs[r].time)
    return _Loaded(export, index, signature, thread_of, threads, newest)


def _user_matches(value: str, users: dict[str, SlackUser]) -> tuple[set[str], str]:
    v = value.strip()
    if v.startswith("<@") and v.endswith(">"):
        v = v[2:-1].split("|")[0]
    fold = v.lstrip("@").casefold()
    ids = set()
    for u in users.values():
        names = {u.id.casefold(), u.name.casefold(), u.real_name.casefold(), u.display_name.casefold()}
        parts = set(u.real_name.casefold().split()) | set(u.display_name.casefold().split())
        parts |= set(u.name.casefold().replace(".", " ").replace("_", " ").replace("-", " ").split())
        if fold in names or fold in parts:
            ids.add(u.id)
    return ids, fold


def _dates(key: str, value: str, flt: _Filter, source: str) -> None:
    span = date_span(value)
    if span is None:
        flt.warnings.append(
            f"{source}: {key}:{value} is not a day, month or year (2025-01-15, 2025-01, 2025); ignored"
        )
        return
    lo, hi = {"after": (span[1], None), "before": (None, span[0])}.get(key, span)
    if lo is not None:
        flt.start = max(flt.start or lo, lo)
    if hi is not None:
        flt.end = min(flt.end or hi, hi)


class SlackSource(ExportSource[_Loaded]):
    """Messages of a Slack workspace export, indexed once per instance (FTS5, BM25)."""

    type = "slack"
    kind = "chat"
    authority = "chat"
    syntax = staticmethod(_syntax.chat)
    filters: ClassVar[frozenset[str]] = frozenset(
        {"from", "in", "after", "before", "on", "during", "is", "has"}
    )
    Options = SlackOptions

    @property
    def opts(self) -> SlackOptions:
        assert isinstance(self.options, SlackOptions)
        return self.options

    async def _load(self) -> _Loaded:
        path = self.options.require_path(self.name)
        state = self.settings.state_dir if self.opts.cache else None
        build = lambda: _build(self.name, path, state)  # noqa: E731
        return await self._cache.get(self.name, path, _signature, build, self.run)

    def _filter(self, parsed: ParsedQuery, export: SlackExport) -> _Filter:
        flt = _Filter()
        for key, value in parsed.filters:
            if key == "from":
                ids, fold = _user_matches(value, export.users)
                flt.user_ids = (flt.user_ids or set()) | ids
                flt.authors = (flt.authors or set()) | {fold}
                if not ids:
                    flt.warnings.append(f"{self.name}: from:{value}: no user of that name in users.json")
            elif key == "in":
                channel = value.strip()
                if channel.startswith("<#") and channel.endswith(">"):
                    channel = channel[2:-1].partition("|")[2] or channel[2:-1]
                flt.channels = (flt.channels or set()) | {channel.lstrip("#").casefold()}
            elif key in ("after", "before", "on", "during"):
                _dates(key, value, flt, self.name)
            elif (key, value.lower()) == ("is", "thread"):
                flt.thread = True
            elif key == "has" and value.lower() in ("file", "link"):
                flt.file |= value.lower() == "file"
                flt.link |= value.lower() == "link"
            elif key in ("is", "has"):
                flt.warnings.append(
                    f"{self.name}: filter '{key}:{value}' is not supported by slack sources; ignored"
                )
        return flt

    def _keep(self, row: int, flt: _Filter, loaded: _Loaded, bounds: tuple[float, float]) -> bool:
        m = loaded.export.messages[row]
        if (
            flt.user_ids is not None
            and flt.authors is not None
            and m.user_id not in flt.user_ids
            and m.author.casefold() not in flt.authors
        ):
            return False
        if flt.channels is not None and not (
            m.channel.casefold() in flt.channels or (m.channel_id or "").casefold() in flt.channels
        ):
            return False
        if not bounds[0] <= m.time < bounds[1]:
            return False
        if flt.thread and not self._in_thread(m, loaded.threads[loaded.thread_of[row]]):
            return False
        if flt.file and not m.files:
            return False
        return not (flt.link and "http://" not in m.text and "https://" not in m.text)

    @staticmethod
    def _in_thread(m: SlackMessage, rows: list[int]) -> bool:
        return len(rows) > 1 or m.reply_count > 0 or (m.thread_ts is not None and m.thread_ts != m.ts)

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        parsed, warnings = self.parse(query)
        loaded = await self._load()
        flt = self._filter(parsed, loaded.export)
        warnings += flt.warnings
        bounds = day_bounds(flt.start, flt.end, ZoneInfo(self.opts.timezone))
        want = max(1, min(limit or self.options.limit, 200))
        words = [*parsed.phrases, *parsed.terms, *analyze(parsed.text)]
        msgs = loaded.export.messages
        hits: list[Hit] = []
        seen: set[tuple[str, str]] = set()
        rows = matching_rows(  # the door's user: the conversations they are in, inside the query
            loaded.index, parsed, lambda: loaded.newest, lambda r: msgs[r].text, access.readers()
        )
        for row, score in rows:
            key = loaded.thread_of[row]
            if key in seen or not self._keep(row, flt, loaded, bounds):
                continue
            seen.add(key)
            hits.append(self._hit(loaded, row, score or 1.0 / (1 + len(hits)), words))
            if len(hits) >= want:
                break
        if loaded.export.skipped:
            warnings.append(f"{self.name}: {loaded.export.skipped} unreadable message(s) or file(s) skipped")
        return self.result(query, hits, warnings)

    def location(self, m: SlackMessage) -> str:
        """A Slack permalink when the workspace is known, else ``slack://CHANNEL/TS``."""
        if self.opts.workspace_url and m.channel_id:
            cid = quote(m.channel_id, safe="")
            url = f"{self.opts.workspace_url}/archives/{cid}/p{quote(m.ts.replace('.', ''), safe='')}"
            if m.thread_ts and m.thread_ts != m.ts:
                url += f"?thread_ts={quote(m.thread_ts, safe='.')}&cid={cid}"
            return url
        return f"slack://{quote(m.channel, safe='')}/{quote(m.ts, safe='.')}"

    def _hit(self, loaded: _Loaded, row: int, score: float, words: list[str]) -> Hit:
        msgs = loaded.export.messages
        m = msgs[row]
        thread = loaded.threads[loaded.thread_of[row]]
        parent = msgs[thread[0]]
        lines = []
        for r in thread[:THREAD_CONTEXT_MESSAGES]:
            when = datetime.fromtimestamp(msgs[r].time, UTC).strftime("%Y-%m-%d %H:%M")
            lines.append(f"{msgs[r].author} ({when}): {msgs[r].text}")
        conclusion = len(thread) > 1 and thread[-1] == row
        authority: Authority = "thread_conclusion" if conclusion else "chat"
        head = " ".join(parent.text.split())[:80] or (parent.files[0] if parent.files else "(no text)")
        meta = {"channel": m.channel, "ts": m.ts, "thread_ts": parent.ts, "messages": str(len(thread))}
        if m.files:
            meta["files"] = ", ".join(m.files)
        return Hit(
            title=f"#{m.channel}: {head}",
            location=self.location(m),
            snippet=snippet(m.text or " ".join(m.files), words),
            text="\n".join(lines)[:THREAD_CONTEXT_CHARS],
            source=self.name,
            kind=self.kind,
            authority=authority,
            score=score,
            author=m.author,
            timestamp=datetime.fromtimestamp(m.time, UTC),
            meta=meta,
        )

    def _summary(self, loaded: _Loaded) -> dict[str, Any]:
        msgs = loaded.export.messages
        export = loaded.export
        channels = len({m.channel for m in msgs})
        threads = sum(1 for rows in loaded.threads.values() if len(rows) > 1)
        detail = (
            f"{len(msgs)} messages in {channels} channels ({threads} threads), "
            f"{export.day_files} day files, {export.bytes_read:,} bytes read"
        )
        if export.skipped:
            detail += f"; {export.skipped} unreadable skipped"
        detail += "".join(f"; {n}" for n in export.notes)
        newest = max((m.time for m in msgs), default=None)
        updated = datetime.fromtimestamp(newest, UTC) if newest is not None else None
        return {"items": len(msgs), "updated": updated, "detail": detail}
