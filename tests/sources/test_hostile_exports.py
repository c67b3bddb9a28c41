"""Exports from outside that try to hang, flood or break a source: FIFOs, devices, bombs, odd names.

Each test fails on the code before the fix: a FIFO blocked ``open`` forever (the timeout marker
turns that into a failure), a zip of many small members expanded without limit, a long subject of
encoded words was decoded in quadratic time, a Maildir file name that is not UTF-8 raised
``UnicodeEncodeError`` when the hit's location was built.
"""

from __future__ import annotations

import base64
import json
import os
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_source_slack import write_export

from sourcewise.config import Settings
from sourcewise.errors import SourceFormatError
from sourcewise.models import SourceQuery
from sourcewise.sources._files import export_kind, read_capped, shown
from sourcewise.sources.messages import mailbox as _mailbox
from sourcewise.sources.messages import slack_export as _slack_export
from sourcewise.sources.messages.mail import MailOptions, MailSource
from sourcewise.sources.tracker import github

pytestmark = pytest.mark.timeout(30)  # a blocked open would otherwise hang the suite: fail instead
MESSAGE = b"From: a@b.example\nSubject: aurora launch\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\naurora body\n"


def maildir(root: Path) -> Path:
    for sub in ("cur", "new", "tmp"):
        (root / sub).mkdir(parents=True)
    return root


@pytest.mark.parametrize("name", ["export.zip", "mail.mbox", "issues.json"])
def test_a_fifo_where_an_export_should_be_is_refused_not_waited_on(tmp_path: Path, name: str) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    read = {
        "export.zip": lambda: _slack_export.read_export("s", fifo),
        "mail.mbox": lambda: _mailbox.read_mailbox("m", fifo),
        "issues.json": lambda: github._files(fifo, "g"),
    }[name]
    with pytest.raises(SourceFormatError, match="FIFO"):
        read()


def test_a_device_behind_a_link_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "zero.zip"
    link.symlink_to("/dev/zero")
    with pytest.raises(SourceFormatError, match="character device"):
        _slack_export.read_export("s", link)
    assert export_kind("s", tmp_path) == "dir"


def test_fifos_and_devices_inside_a_maildir_are_skipped_and_counted(tmp_path: Path) -> None:
    box = maildir(tmp_path / "md")
    (box / "cur" / "good:2,S").write_bytes(MESSAGE)
    os.mkfifo(box / "cur" / "fifo:2,S")
    (box / "new" / "zero").symlink_to("/dev/zero")
    data = _mailbox.read_mailbox("m", box)
    assert [r.subject for r in data.records] == ["aurora launch"]
    assert data.skipped == 2


def test_a_slack_folder_day_file_that_is_a_fifo_is_skipped(tmp_path: Path) -> None:
    root = write_export(tmp_path / "e")
    day_files = sorted(root.glob("*/*.json"))
    assert day_files, "the fixture export has day files"
    readable = _slack_export.read_export("s", root)
    victim = day_files[0]
    victim.unlink()
    os.mkfifo(victim)
    export = _slack_export.read_export("s", root)
    assert export.skipped >= 1
    assert 0 < len(export.messages) < len(readable.messages)


def test_many_small_members_that_expand_together_are_refused_as_a_bomb(tmp_path: Path) -> None:
    root = write_export(tmp_path / "e")
    target = tmp_path / "bomb.zip"
    day = json.dumps([{"type": "message", "user": "U1", "ts": "1.0", "text": "a" * 500}] * 400).encode()
    assert len(day) < _slack_export.BOMB_FLOOR  # each member alone passes the per-member test
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.glob("*.json")):
            archive.write(path, path.name)
        for n in range(80):
            archive.writestr(f"general/{2000 + n}-01-01.json", day)
    with pytest.raises(SourceFormatError, match="zip bomb"):
        _slack_export.read_export("s", target)


def test_an_ordinary_zipped_export_is_still_read(tmp_path: Path) -> None:
    root = write_export(tmp_path / "e")
    target = tmp_path / "ok.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.rglob("*.json")):
            archive.write(path, path.relative_to(root).as_posix())
    assert _slack_export.read_export("s", target).messages


def test_a_megabyte_subject_of_encoded_words_is_decoded_within_the_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    word = "=?UTF-8?B?" + base64.b64encode("안녕하세요".encode()).decode() + "?="
    raw = b"From: a@b\nSubject: " + " ".join([word] * 60_000).encode() + b"\n\nbody\n"
    seen: list[int] = []
    real = _mailbox.decode_header

    def recording(value: str) -> list[tuple[bytes | str, str | None]]:
        seen.append(len(value))
        return real(value)

    monkeypatch.setattr(_mailbox, "decode_header", recording)
    record = _mailbox.parse_message(raw, "inbox", "1")
    assert record.subject.startswith("안녕하세요")
    assert len(record.subject) == _mailbox.MAX_HEADER_CHARS
    assert seen
    assert max(seen) <= _mailbox.MAX_RAW_HEADER_CHARS


async def test_a_maildir_name_that_is_not_utf8_is_found_and_percent_encoded(tmp_path: Path) -> None:
    box = maildir(tmp_path / "md")
    name = os.fsdecode(b"bad\xff\xfename:2,S")
    (box / "cur" / name).write_bytes(MESSAGE)
    settings = Settings(state_dir=tmp_path / "state")
    source = MailSource("mail", MailOptions(path=str(box)), settings)
    try:
        result = await source.search(SourceQuery(source="email", mode="keyword", query="aurora"))
    finally:
        await source.aclose()
    assert [h.location for h in result.hits] == ["mail://inbox/bad%FF%FEname"]


def test_read_capped_refuses_what_grows_past_the_cap(tmp_path: Path) -> None:
    file = tmp_path / "f"
    file.write_bytes(b"x" * 10)
    assert read_capped(file, 10) == b"x" * 10
    assert read_capped(file, 9) is None
    with pytest.raises(OSError, match="directory"):
        read_capped(tmp_path, 10)


@given(st.text())
def test_shown_makes_any_name_printable_utf8(name: str) -> None:
    text = shown(name)
    text.encode("utf-8")  # never raises: no surrogate survives
    assert shown(text) == text


def test_read_capped_allocates_what_the_file_holds_not_the_cap(tmp_path: Path) -> None:
    """A read of n bytes allocates n first: a small file under a large cap must not cost the cap."""
    import tracemalloc

    file = tmp_path / "small.md"
    file.write_bytes(b"# small\n" * 100)
    tracemalloc.start()
    try:
        assert read_capped(file, 200_000_000) == b"# small\n" * 100
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000
