"""Reading a Slack workspace export (a zip or its unpacked folder) into messages, safely.

The shape is the one Slack documents for workspace exports ("How to read Slack data exports",
https://slack.com/help/articles/220556107): ``channels.json`` (and ``groups.json``, ``mpims.json``,
``dms.json`` when present), ``users.json``, and one folder per conversation holding one
``YYYY-MM-DD.json`` file per day, each a JSON list of message objects (``ts``, ``user``, ``text``,
``thread_ts``, ``reply_count``, ``files`` ...). A zip whose files all sit under one top folder is
read the same way.

Limits, because an export comes from outside: a zip member is never written to disk; member names
with ``..``, a drive or a leading ``/`` are skipped; at most ``MAX_MEMBERS`` files,
``MAX_FILE_BYTES`` per file and ``MAX_TOTAL_BYTES`` in all (uncompressed); a member that expands more
than ``MAX_RATIO`` times is refused as a zip bomb, and so is an archive whose members together
do (many small members escape a test per member). A file that is not JSON or a message of the wrong
shape is skipped and counted; an export without ``channels.json`` is a ``SourceFormatError``.
"""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path, PurePosixPath
from typing import Any

from sourcewise.errors import SourceFormatError
from sourcewise.sources._files import export_kind, open_regular, read_capped
from sourcewise.sources.messages.exports import clean

__all__ = ["SlackExport", "SlackMessage", "SlackUser", "read_export"]

MAX_MEMBERS = 200_000
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024
MAX_RATIO = 200
BOMB_FLOOR = 1024 * 1024  # below this expanded size, a ratio is not worth refusing
MAX_TEXT_CHARS = 40_000
_DAY_FILE = re.compile(r"\d{4}-\d{2}-\d{2}\.json")
# One bracketed Slack token (<@U1>, <#C1|eng>, <https://x|label>, <!here>): no nesting, linear time.
_TOKEN = re.compile(r"<([^<>\n]{1,2000})>")
_NOISE = frozenset({"channel_join", "channel_leave", "channel_purpose", "channel_topic", "channel_name"})
_CONVERSATIONS = ("channels.json", "groups.json", "mpims.json", "dms.json")


@dataclass(frozen=True)
class SlackUser:
    id: str
    name: str
    real_name: str = ""
    display_name: str = ""
    email: str = ""

    @property
    def label(self) -> str:
        return self.real_name or self.display_name or self.name or self.id


@dataclass(frozen=True)
class SlackMessage:
    channel: str
    channel_id: str | None
    ts: str
    time: float
    user_id: str | None
    author: str
    text: str
    thread_ts: str | None
    reply_count: int
    files: tuple[str, ...]


@dataclass
class SlackExport:
    users: dict[str, SlackUser] = field(default_factory=dict)
    channel_ids: dict[str, str] = field(default_factory=dict)
    messages: list[SlackMessage] = field(default_factory=list)
    skipped: int = 0
    day_files: int = 0
    bytes_read: int = 0
    notes: list[str] = field(default_factory=list)
    # conversation folder -> its members' ids (a private channel, a group or a direct message);
    # None: a public channel, open to everyone in the workspace
    members: dict[str, tuple[str, ...] | None] = field(default_factory=dict)

    def readers(self, folder: str) -> tuple[str, ...] | None:
        """Who may read a conversation's messages (``readers``): ``None`` for everyone; else each
        member as ``user:ID`` and ``user:EMAIL``; nobody for a folder no listing names."""
        if folder not in self.members:
            return ()
        ids = self.members[folder]
        if ids is None:
            return None
        emails = [u.email for i in ids if (u := self.users.get(i)) is not None and u.email]
        return tuple(dict.fromkeys(f"user:{n.casefold()}" for n in [*ids, *emails]))


class _Tree:
    """The files of an export by relative POSIX name, from a folder or a zip."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.total = 0

    def names(self) -> list[str]:
        raise NotImplementedError

    def read(self, name: str) -> bytes:
        raise NotImplementedError

    def _count(self, size: int, member: str) -> None:
        if size > MAX_FILE_BYTES:
            raise SourceFormatError(self.name, f"{member} is larger than {MAX_FILE_BYTES} bytes")
        self.total += size
        if self.total > MAX_TOTAL_BYTES:
            raise SourceFormatError(self.name, f"the export is larger than {MAX_TOTAL_BYTES} bytes")


def _safe_name(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return bool(parts) and not (
        name.startswith(("/", "\\")) or "\\" in name or ".." in parts or ":" in parts[0]
    )


class _FolderTree(_Tree):
    def __init__(self, source: str, root: Path) -> None:
        super().__init__(source)
        self.root = root.resolve()
        found = [p.name for p in self.root.glob("*.json")]
        found += [f"{p.parent.name}/{p.name}" for p in self.root.glob("*/*.json")]
        if len(found) > MAX_MEMBERS:
            raise SourceFormatError(source, f"the export has more than {MAX_MEMBERS} files")
        self._names = sorted(found)

    def names(self) -> list[str]:
        return self._names

    def read(self, name: str) -> bytes:
        path = (self.root / name).resolve()
        if not path.is_relative_to(self.root):
            raise OSError(f"{name} is outside the export")
        data = read_capped(path, MAX_FILE_BYTES)
        self._count(MAX_FILE_BYTES + 1 if data is None else len(data), name)
        assert data is not None  # _count refused anything over the cap
        return data


class _ZipTree(_Tree):
    def __init__(self, source: str, archive: zipfile.ZipFile) -> None:
        super().__init__(source)
        self.zip = archive
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise SourceFormatError(source, f"the zip has more than {MAX_MEMBERS} members")
        self.infos = {i.filename: i for i in infos if not i.is_dir() and _safe_name(i.filename)}
        self.unsafe = len([i for i in infos if not i.is_dir()]) - len(self.infos)
        self._names = sorted(self.infos)
        for info in self.infos.values():
            _refuse_bomb(source, info.filename, info.file_size, info.compress_size)
        # Many small members escape the per-member test (each under its floor): the archive as a
        # whole is held to the same ratio, and to the total, before anything is expanded.
        declared = sum(i.file_size for i in self.infos.values())
        if declared > MAX_TOTAL_BYTES:
            raise SourceFormatError(source, f"the export expands to more than {MAX_TOTAL_BYTES} bytes")
        _refuse_bomb(source, "the zip", declared, sum(i.compress_size for i in self.infos.values()))

    def names(self) -> list[str]:
        return self._names

    def read(self, name: str) -> bytes:
        info = self.infos[name]
        self._count(info.file_size, name)
        with self.zip.open(info) as member:
            data = member.read(MAX_FILE_BYTES + 1)  # the declared size may lie; this bound does not
        self._count(max(0, len(data) - info.file_size), name)
        return data


def _refuse_bomb(source: str, what: str, size: int, compressed: int) -> None:
    ratio = size / max(compressed, 1)
    if size > BOMB_FLOOR and ratio > MAX_RATIO:
        raise SourceFormatError(
            source,
            f"refused: {what} expands {ratio:.0f} times (limit {MAX_RATIO}); this looks like a zip bomb",
        )


def _load_json(tree: _Tree, name: str) -> Any:
    try:
        return json.loads(tree.read(name))
    except (ValueError, RecursionError) as exc:
        raise SourceFormatError(tree.name, f"{name} is not valid JSON ({type(exc).__name__})") from exc


def _users(raw: Any, tree: _Tree) -> dict[str, SlackUser]:
    if not isinstance(raw, list):
        raise SourceFormatError(tree.name, "users.json: expected a list of users")
    users: dict[str, SlackUser] = {}
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        profile = item.get("profile") if isinstance(item.get("profile"), dict) else {}
        assert isinstance(profile, dict)

        def text(value: Any) -> str:
            return clean(value)[:200] if isinstance(value, str) else ""

        users[item["id"]] = SlackUser(
            id=item["id"],
            name=text(item.get("name")),
            real_name=text(profile.get("real_name")) or text(item.get("real_name")),
            display_name=text(profile.get("display_name")),
            email=text(profile.get("email")),
        )
    return users


def _conversations(tree: _Tree, prefix: str, export: SlackExport) -> dict[str, str]:
    """Folder name -> conversation id, from channels.json and its private/DM siblings; each
    conversation's members into ``export.members`` (a public channel's: ``None``)."""
    folders: dict[str, str] = {}
    names = set(tree.names())
    for listing in _CONVERSATIONS:
        if prefix + listing not in names:
            continue
        raw = _load_json(tree, prefix + listing)
        ok = isinstance(raw, list) and all(isinstance(c, dict) and isinstance(c.get("id"), str) for c in raw)
        if not ok:
            raise SourceFormatError(tree.name, f"{listing}: expected a list of conversations with an id")
        for conv in raw:
            folder = conv.get("name") if isinstance(conv.get("name"), str) else conv["id"]
            folders[folder] = conv["id"]
            members = conv.get("members")
            ids = tuple(m for m in members if isinstance(m, str)) if isinstance(members, list) else ()
            export.members[folder] = None if listing == "channels.json" else ids
    return folders


def render_text(text: str, users: dict[str, SlackUser], channels: dict[str, str]) -> str:
    """Slack's markup as plain text: ``<@U1>`` -> ``@Sarah Kim``, ``<#C1|eng>`` -> ``#eng``, links."""
    by_id = {cid: name for name, cid in channels.items()}

    def token(match: re.Match[str]) -> str:
        body = match.group(1)
        target, _, label = body.partition("|")
        if target.startswith("@"):
            user = users.get(target[1:])
            return "@" + (user.label if user else label or target[1:])
        if target.startswith("#"):
            return "#" + (label or by_id.get(target[1:], target[1:]))
        if target.startswith("!"):
            return label or "@" + target[1:].split("^")[0]
        return f"{label} ({target})" if label and label != target else target

    return unescape(_TOKEN.sub(token, text))


def _message(raw: Any, folder: str, channel_id: str | None, export: SlackExport) -> SlackMessage | None:
    """One message object, or ``None`` for noise (joins ...); ``ValueError`` when malformed."""
    if not isinstance(raw, dict) or not isinstance(raw.get("ts"), str):
        raise ValueError("not a message object with a ts")
    if raw.get("subtype") in _NOISE:
        return None
    ts = raw["ts"]
    when = float(ts)
    if not 0 <= when < 1e11:
        raise ValueError("ts out of range")
    user_id = raw.get("user") if isinstance(raw.get("user"), str) else None
    user = export.users.get(user_id or "")
    profile = raw.get("user_profile") if isinstance(raw.get("user_profile"), dict) else {}
    assert isinstance(profile, dict)
    fallback = profile.get("real_name") or raw.get("username") or user_id or "unknown"
    files = raw.get("files") if isinstance(raw.get("files"), list) else []
    assert isinstance(files, list)
    names = tuple(
        clean(str(f.get("title") or f.get("name") or "file"))[:200] for f in files if isinstance(f, dict)
    )
    text: str = raw["text"] if isinstance(raw.get("text"), str) else ""
    thread_ts: str | None = raw["thread_ts"] if isinstance(raw.get("thread_ts"), str) else None
    replies = raw.get("reply_count")
    return SlackMessage(
        channel=folder,
        channel_id=channel_id,
        ts=ts,
        time=when,
        user_id=user_id,
        author=user.label if user else clean(str(fallback))[:200],
        text=clean(render_text(text[:MAX_TEXT_CHARS], export.users, export.channel_ids)),
        thread_ts=thread_ts,
        reply_count=replies if isinstance(replies, int) and replies >= 0 else 0,
        files=names,
    )


def _prefix(tree: _Tree) -> str:
    names = tree.names()
    if "channels.json" in names:
        return ""
    tops = {n.split("/")[0] for n in names if n.count("/") == 1 and n.endswith("/channels.json")}
    if len(tops) == 1:
        return tops.pop() + "/"
    raise SourceFormatError(
        tree.name,
        "not a Slack export: no channels.json at its top (a workspace export holds channels.json, "
        "users.json and one folder of YYYY-MM-DD.json files per channel)",
    )


def _day_files(tree: _Tree, prefix: str) -> Iterator[tuple[str, str]]:
    for name in tree.names():
        if not name.startswith(prefix):
            continue
        parts = name[len(prefix) :].split("/")
        if len(parts) == 2 and _DAY_FILE.fullmatch(parts[1]):
            yield name, parts[0]


def _read(tree: _Tree) -> SlackExport:
    prefix = _prefix(tree)
    export = SlackExport()
    export.channel_ids = _conversations(tree, prefix, export)
    if prefix + "users.json" in tree.names():
        export.users = _users(_load_json(tree, prefix + "users.json"), tree)
    else:
        export.notes.append("no users.json: authors shown by id")
    for name, folder in _day_files(tree, prefix):
        export.day_files += 1
        try:
            day = json.loads(tree.read(name))
        except (ValueError, RecursionError, OSError, zipfile.BadZipFile, zlib.error, EOFError):
            export.skipped += 1
            continue
        if not isinstance(day, list):
            export.skipped += 1
            continue
        for raw in day:
            try:
                message = _message(raw, folder, export.channel_ids.get(folder), export)
            except (ValueError, TypeError, OverflowError):
                export.skipped += 1
                continue
            if message is not None:
                export.messages.append(message)
    if isinstance(tree, _ZipTree) and tree.unsafe:
        export.notes.append(f"{tree.unsafe} zip member(s) with unsafe names skipped")
    export.bytes_read = tree.total
    return export


def read_export(source: str, path: Path) -> SlackExport:
    """The export at ``path`` (folder or zip), or a typed error saying what is wrong with it."""
    if export_kind(source, path) == "dir":
        return _read(_FolderTree(source, path))
    try:
        with open_regular(path) as handle, zipfile.ZipFile(handle) as archive:
            return _read(_ZipTree(source, archive))
    except zipfile.BadZipFile as exc:
        raise SourceFormatError(source, f"{path.name} is not a folder nor a readable zip ({exc})") from exc
    except (NotImplementedError, RuntimeError, zlib.error, EOFError, OSError, ValueError) as exc:
        raise SourceFormatError(source, f"{path.name}: the zip cannot be read ({exc})") from exc
