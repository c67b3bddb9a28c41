"""Reading an mbox file or a Maildir (with its Maildir++ folders) into decoded mail records.

Only the standard library reads mail: ``mailbox`` for the container, ``email`` for each message:
RFC 2047 headers (``=?UTF-8?B?...?=``, ``=?EUC-KR?B?...?=``) through ``email.header``, MIME bodies
(base64, quoted-printable) through ``get_payload(decode=True)``. The ``compat32`` parser is used
rather than ``policy.default``: it reads a message about five times faster, and the decoding above
is the same either way.
A body's bytes are decoded with its declared charset (EUC-KR read as its superset CP949), else by
detection; text/plain is preferred, HTML is reduced to its text.

Limits: a message over ``MAX_MESSAGE_BYTES`` is skipped and counted, as is one the ``email`` package
cannot read; at most ``MAX_MESSAGES`` are read; a body is kept to ``MAX_BODY_CHARS``.
"""

from __future__ import annotations

import mailbox
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.header import decode_header, make_header
from email.message import Message
from email.parser import BytesParser
from email.utils import getaddresses, parsedate_to_datetime
from functools import partial
from pathlib import Path

from lxml import etree
from lxml import html as lxml_html

from sourcewise.errors import SourceFormatError, SourceUnavailable
from sourcewise.sources._files import export_kind, open_regular, read_capped, shown
from sourcewise.sources.messages.exports import clean
from sourcewise.text.extract import decode

__all__ = ["MailRecord", "MailboxData", "read_mailbox", "signature"]

MAX_MESSAGE_BYTES = 25 * 1024 * 1024
MAX_MESSAGES = 500_000
MAX_BODY_CHARS = 100_000
MAX_HEADER_CHARS = 2_000
# A header is cut to this before RFC 2047 decoding, which is quadratic in a value's length (a 3 MB
# subject of encoded words took over 30 s). Decoding never yields more characters than it reads, so
# the first MAX_HEADER_CHARS of the decoded value are always inside this cut.
MAX_RAW_HEADER_CHARS = 8 * MAX_HEADER_CHARS
_KOREAN_LEGACY = {"euc-kr", "euc_kr", "ks_c_5601-1987", "ks_c_5601", "korean", "x-windows-949", "windows-949"}
_PARSER = BytesParser(policy=policy.compat32)
_WANTED = frozenset({"from", "to", "cc", "subject", "date", "message-id", "in-reply-to", "references"})


@dataclass(frozen=True)
class MailRecord:
    folder: str
    key: str
    message_id: str | None
    subject: str
    sender: str
    sender_name: str
    recipients: str
    time: datetime | None
    body: str
    attachments: tuple[str, ...]
    in_reply_to: str | None
    references: tuple[str, ...]


@dataclass
class MailboxData:
    kind: str
    records: list[MailRecord] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    skipped: int = 0
    size: int = 0


def _decoded(value: object) -> str:
    """An RFC 2047 header value as text; a broken encoded word or an unknown charset stays as written."""
    try:
        text = str(make_header(decode_header(value)))  # type: ignore[arg-type]
    except (ValueError, LookupError, UnicodeError, TypeError, AssertionError, IndexError):
        text = str(value)
    return text.encode("utf-8", "replace").decode("utf-8")  # raw 8-bit bytes arrive as surrogates


def _headers(msg: Message) -> dict[str, str]:
    """The headers we read, decoded once, each on one line and cut to ``MAX_HEADER_CHARS``."""
    out: dict[str, str] = {}
    for key, value in msg.raw_items():
        name = key.lower()
        if name in _WANTED and name not in out:
            raw = value[:MAX_RAW_HEADER_CHARS] if isinstance(value, str) else value
            out[name] = " ".join(clean(_decoded(raw)).split())[:MAX_HEADER_CHARS]
    return out


def _ids(text: str, limit: int = 100) -> tuple[str, ...]:
    """``<a@b> <c@d>`` -> ``("a@b", "c@d")``: angle-bracketed message ids, in order."""
    out: list[str] = []
    for chunk in text.split("<")[1:]:
        mid = chunk.partition(">")[0].strip()
        if mid and " " not in mid:
            out.append(mid)
        if len(out) >= limit:
            break
    return tuple(out)


def _date(value: str) -> datetime | None:
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value)
    except (ValueError, TypeError, IndexError, OverflowError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _text_of(part: Message) -> str:
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    charset = (part.get_content_charset() or "").lower()
    text = decode(payload, "cp949" if charset in _KOREAN_LEGACY else charset or None)
    if part.get_content_type() == "text/html":
        text = _html_text(text)
    return text


def _html_text(html: str) -> str:
    try:
        root = lxml_html.fromstring(html)
    except (etree.ParserError, ValueError):
        return ""
    for bad in root.xpath("//script|//style|//head"):
        bad.drop_tree()
    return "\n".join(line.strip() for line in root.text_content().splitlines() if line.strip())


def _body_and_attachments(msg: Message) -> tuple[str, tuple[str, ...]]:
    """The first text/plain part that is not an attachment (else the first text/html), and the
    names of the attachments."""
    plain: Message | None = None
    html: Message | None = None
    names: list[str] = []
    for part in msg.walk():
        if part.is_multipart():
            continue
        filename = part.get_filename()
        if part.get_content_disposition() == "attachment" or filename:
            names.append(clean(_decoded((filename or part.get_content_type())[:MAX_RAW_HEADER_CHARS]))[:200])
            continue
        ctype = part.get_content_type()
        if ctype == "text/plain" and plain is None:
            plain = part
        elif ctype == "text/html" and html is None:
            html = part
    chosen = plain or html
    body = clean(_text_of(chosen))[:MAX_BODY_CHARS] if chosen is not None else ""
    return body, tuple(names[:50])


def parse_message(raw: bytes, folder: str, key: str) -> MailRecord:
    # compat32 parsing plus email.header decoding reads a message about 5x faster than policy.default
    # (measured: benchmarks/RESULTS.md, messages); headers are decoded the same RFC 2047 way.
    msg = _PARSER.parsebytes(raw)
    head = _headers(msg)
    sender = head.get("from", "")
    people = getaddresses([sender])
    name, address = people[0] if people else ("", "")
    body, attachments = _body_and_attachments(msg)
    message_id = _ids(head.get("message-id", ""), 1)
    return MailRecord(
        folder=folder,
        key=key,
        message_id=message_id[0] if message_id else None,
        subject=head.get("subject", ""),
        sender=sender,
        sender_name=name or address or sender,
        recipients=", ".join(v for v in (head.get("to"), head.get("cc")) if v),
        time=_date(head.get("date", "")),
        body=body,
        attachments=attachments,
        in_reply_to=next(iter(_ids(head.get("in-reply-to", ""), 1)), None),
        references=_ids(head.get("references", "")),
    )


Reader = Callable[[], "bytes | None"]


def _folders(source: str, path: Path) -> Iterator[tuple[str, Iterator[tuple[str, Reader]]]]:
    """Each folder's name and its messages as (key, read) pairs, nothing read yet."""
    if export_kind(source, path) == "dir":
        if not ((path / "cur").is_dir() and (path / "new").is_dir()):
            raise SourceFormatError(source, f"{path} is a folder but not a Maildir (no cur/ and new/ inside)")
        yield "inbox", _maildir(path)
        subfolders = (e for e in os.scandir(path) if len(e.name) > 1 and e.name[0] == "." and e.is_dir())
        for entry in sorted(subfolders, key=lambda e: e.name):  # Maildir++ folders: .Sent, .Work.Projects
            yield shown(entry.name[1:]), _maildir(Path(entry.path))
        return
    with open_regular(path) as handle:
        head = handle.read(5)
    if head and head != b"From ":
        raise SourceFormatError(source, f"{path.name} is not an mbox file (it does not start with 'From ')")
    box = mailbox.mbox(path, factory=None, create=False)
    yield shown(path.stem), ((str(key), partial(box.get_bytes, key)) for key in box.iterkeys())


def _maildir(folder: Path) -> Iterator[tuple[str, Reader]]:
    """A Maildir folder's messages (new/, then cur/), listed here rather than by ``mailbox.Maildir``,
    whose ``get_bytes`` opens whatever sits there: a FIFO in cur/ would block forever, a link to
    /dev/zero fill memory. ``read_capped`` opens only regular files, within the message cap."""
    for sub in ("new", "cur"):
        if not (folder / sub).is_dir():
            continue
        for entry in sorted(os.scandir(folder / sub), key=lambda e: e.name):
            if not entry.name.startswith(".") and not entry.is_dir():
                key = entry.name.split(":", 1)[0]  # the unique part; flags follow the colon
                yield key, partial(read_capped, Path(entry.path), MAX_MESSAGE_BYTES)


def signature(path: Path) -> tuple[int, ...]:
    """What changes when mail is added or removed: the file, or each Maildir folder's cur/ and new/."""
    if not path.is_dir():
        stat = path.stat()
        return (stat.st_mtime_ns, stat.st_size)
    dirs = [path, *(p for p in path.iterdir() if p.name.startswith(".") and p.is_dir())]
    return tuple((d / sub).stat().st_mtime_ns for d in dirs for sub in ("cur", "new") if (d / sub).is_dir())


def read_mailbox(source: str, path: Path) -> MailboxData:
    """Every readable message of the mbox or Maildir at ``path``; unreadable ones are counted."""
    data = MailboxData(kind="maildir" if export_kind(source, path) == "dir" else "mbox")
    try:
        for folder, messages in _folders(source, path):
            data.folders.append(folder)
            for key, read in messages:
                if len(data.records) >= MAX_MESSAGES:
                    break
                _read_one(read, folder, key, data)
    except (OSError, mailbox.Error) as exc:
        raise SourceUnavailable(source, f"{shown(str(path))} cannot be read ({exc})") from exc
    return data


def _read_one(read: Reader, folder: str, key: str, data: MailboxData) -> None:
    try:
        raw = read()
    except (OSError, KeyError, mailbox.Error):
        data.skipped += 1
        return
    if raw is None or len(raw) > MAX_MESSAGE_BYTES:
        data.skipped += 1
        return
    data.size += len(raw)
    try:
        data.records.append(parse_message(raw, folder, key))
    except Exception:  # the email package raises assorted errors on hostile input; skip that one message
        data.skipped += 1
