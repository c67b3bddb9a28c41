"""Mail and Slack exports keep their index in STATE_DIR/exports: reopened, rebuilt, never half-written."""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import mailbox
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_source_mail import M1, M2, M3, M4
from test_source_slack import DAYS, write_export

from sourcewise.config import Settings
from sourcewise.models import SourceQuery
from sourcewise.sources.messages import exports as _messages
from sourcewise.sources.messages import mail, slack
from sourcewise.sources.messages.exports import export_index_path
from sourcewise.sources.messages.mail import MailOptions, MailSource
from sourcewise.sources.messages.mailbox import MailboxData, MailRecord
from sourcewise.sources.messages.slack import SlackOptions, SlackSource


@pytest.fixture(autouse=True)
def _logs_reach_caplog(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI tests, run in-process before these, point the sourcewise logger at their stderr."""
    logger = logging.getLogger("sourcewise")
    monkeypatch.setattr(logger, "propagate", True)
    monkeypatch.setattr(logger, "handlers", [])


def write_mbox(path: Path, messages: list[bytes]) -> Path:
    box = mailbox.mbox(path)
    for raw in messages:
        box.add(raw)
    box.flush()
    box.close()
    return path


def mail_source(path: Path, state: Path, **options: Any) -> MailSource:
    return MailSource("mail", MailOptions(path=path, **options), Settings(state_dir=state))


def slack_source(path: Path, state: Path, **options: Any) -> SlackSource:
    return SlackSource("team", SlackOptions(path=path, **options), Settings(state_dir=state))


async def found(src: MailSource | SlackSource, text: str) -> list[str]:
    result = await src.search(SourceQuery(source=src.kind, mode="keyword", query=text))
    await src.aclose()
    return [h.location for h in result.hits]


def stored(state: Path) -> list[Path]:
    folder = state / "exports"
    return sorted(folder.iterdir()) if folder.exists() else []


async def test_a_mailbox_index_is_stored_and_reopened_without_reading_the_mail_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = write_mbox(tmp_path / "inbox.mbox", [M1, M2, M3, M4])
    state = tmp_path / "state"
    first = await found(mail_source(box, state), "budget aurora")
    assert first
    files = stored(state)
    assert files == [export_index_path(state, "mail", box)]
    assert files[0].name.startswith("mail-")

    def no_reading(*_args: object) -> MailboxData:
        raise AssertionError("the mailbox was read again")

    monkeypatch.setattr(mail, "read_mailbox", no_reading)
    again = mail_source(box, state)
    assert await found(again, "budget aurora") == first
    result = await mail_source(box, state).search(
        SourceQuery(source="email", mode="keyword", query="subject:예산 has:attachment")
    )
    assert [h.meta["message_id"] for h in result.hits] == ["m2@acme.com"]  # records came back whole
    assert result.hits[0].meta["thread_id"] == "m1@acme.com"


async def test_a_changed_mailbox_is_read_again(tmp_path: Path) -> None:
    box = write_mbox(tmp_path / "inbox.mbox", [M1, M2])
    state = tmp_path / "state"
    assert await found(mail_source(box, state), "databases") == []
    extra = mailbox.mbox(box)
    extra.add(M4)
    extra.flush()
    extra.close()
    assert await found(mail_source(box, state), "databases") == ["mid:m4@vendor.example"]
    assert len(stored(state)) == 1  # replaced in place, no temporary file left


async def test_a_damaged_index_file_is_rebuilt_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    box = write_mbox(tmp_path / "inbox.mbox", [M1, M2, M3])
    state = tmp_path / "state"
    first = await found(mail_source(box, state), "aurora")
    (file,) = stored(state)
    file.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000)
    with caplog.at_level(logging.WARNING, logger="sourcewise"):
        assert await found(mail_source(box, state), "aurora") == first
    assert "damaged" in caplog.text
    assert await found(mail_source(box, state), "aurora") == first


async def test_an_unwritable_state_dir_keeps_the_index_in_memory_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    box = write_mbox(tmp_path / "inbox.mbox", [M1, M3])
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    _messages._warned.clear()
    with caplog.at_level(logging.WARNING, logger="sourcewise"):
        assert await found(mail_source(box, blocker / "state"), "aurora") == [
            "mid:m3@acme.com",
            "mid:m1@acme.com",
        ]
    assert "kept in memory" in caplog.text


async def test_cache_false_stores_nothing(tmp_path: Path) -> None:
    box = write_mbox(tmp_path / "inbox.mbox", [M1, M3])
    state = tmp_path / "state"
    assert await found(mail_source(box, state, cache=False), "aurora") == [
        "mid:m3@acme.com",
        "mid:m1@acme.com",
    ]
    assert stored(state) == []


async def test_a_failed_build_leaves_the_previous_index_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = write_mbox(tmp_path / "inbox.mbox", [M1, M3])
    state = tmp_path / "state"
    await found(mail_source(box, state), "aurora")
    (file,) = stored(state)
    before = file.read_bytes()
    extra = mailbox.mbox(box)
    extra.add(M4)
    extra.flush()
    extra.close()

    def broken(_data: MailboxData) -> Any:
        yield 0, ("half", "of", "it")
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(mail, "_rows", broken)
    src = mail_source(box, state)
    with pytest.raises(RuntimeError, match="disk on fire"):
        await src.search(SourceQuery(source="email", mode="keyword", query="aurora"))
    assert stored(state) == [file]
    assert file.read_bytes() == before


async def test_a_slack_export_index_is_stored_reopened_and_rebuilt_on_a_new_day_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_export(tmp_path / "export")
    state = tmp_path / "state"
    first = await found(slack_source(root, state), "aurora")
    assert len(first) == 3
    assert [p.name[:6] for p in stored(state)] == ["slack-"]
    reads: list[Path] = []
    real = slack.read_export

    def counting(source: str, path: Path) -> Any:
        reads.append(path)
        return real(source, path)

    monkeypatch.setattr(slack, "read_export", counting)
    assert await found(slack_source(root, state), "aurora") == first
    assert reads == []
    (root / "random" / "2025-03-01.json").write_text(
        json.dumps([{"type": "message", "user": "U1", "ts": "1740823200.000700", "text": "aurora retro"}])
    )
    assert len(await found(slack_source(root, state), "aurora")) == 4
    assert reads == [root]
    assert len(stored(state)) == 1


records = st.builds(
    MailRecord,
    folder=st.text(max_size=10),
    key=st.text(max_size=10),
    message_id=st.none() | st.text(max_size=20),
    subject=st.text(max_size=40),
    sender=st.text(max_size=20),
    sender_name=st.text(max_size=20),
    recipients=st.text(max_size=20),
    time=st.none() | st.datetimes(timezones=st.timezones()),
    body=st.text(max_size=200),
    attachments=st.lists(st.text(max_size=10), max_size=3).map(tuple),
    in_reply_to=st.none() | st.text(max_size=20),
    references=st.lists(st.text(max_size=10), max_size=3).map(tuple),
)


_EXAMPLES = itertools.count()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(records, max_size=5))
def test_any_mail_records_survive_the_stored_round_trip(tmp_path: Path, recs: list[MailRecord]) -> None:
    data = MailboxData("mbox", recs, ["inbox"], 1, 99)
    export = tmp_path / "x.mbox"
    export.touch()
    state = tmp_path / "state-rt"
    sig = (len(recs), next(_EXAMPLES))  # a new signature each example: always rebuilt (an id() can
    # come back in a later example, which then read the earlier example's stored export)
    _data, index = _messages.open_export(mail.CODEC, export, sig, state, lambda: data, mail._rows)
    index.close()
    back, index = _messages.open_export(mail.CODEC, export, sig, state, _unread, mail._rows)
    index.close()
    assert _instants(back) == _instants(data)


def _instants(data: MailboxData) -> MailboxData:
    """Each record with its time as a fixed offset: the instant and the offset it was written with.

    A repeated wall-clock hour (2000-10-29 02:00 America/Winnipeg, fold=1) never compares equal to
    the same instant in a fixed offset (Python's rule for ambiguous times), so the store is held to
    what it keeps rather than to the zone object.
    """

    def fixed(t: datetime | None) -> datetime | None:
        offset = t.utcoffset() if t is not None else None
        return t if t is None or offset is None else t.astimezone(timezone(offset))

    return dataclasses.replace(
        data, records=[dataclasses.replace(r, time=fixed(r.time)) for r in data.records]
    )


def _unread() -> MailboxData:
    raise AssertionError("read although stored")


def test_the_slack_codec_round_trips_the_fixture_export(tmp_path: Path) -> None:
    root = write_export(tmp_path / "e", DAYS)
    export = slack.read_export("team", root)
    assert slack._load(json.loads(json.dumps(slack._dump(export)))) == export
