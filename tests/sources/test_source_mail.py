"""The mail source: an mbox and a Maildir written with the ``mailbox`` module, MIME-encoded Korean."""

from __future__ import annotations

import base64
import mailbox
import quopri
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sourcewise.config import Settings
from sourcewise.errors import SourceError, SourceFormatError, SourceUnavailable
from sourcewise.models import SourceQuery
from sourcewise.sources import resolve_source
from sourcewise.sources.messages import mailbox as _mailbox
from sourcewise.sources.messages.mail import MailOptions, MailSource, base_subject


def b_word(text: str, charset: str) -> str:
    return f"=?{charset}?B?{base64.b64encode(text.encode(charset)).decode()}?="


def mail(headers: dict[str, str], body: str) -> bytes:
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return (head + "MIME-Version: 1.0\r\n\r\n" + body).encode("ascii")


M1 = mail(
    {
        "From": "Sarah Kim <sarah@acme.com>",
        "To": "team@acme.com",
        "Subject": b_word("예산 검토 회의", "utf-8"),
        "Date": "Wed, 15 Jan 2025 09:00:00 +0000",
        "Message-ID": "<m1@acme.com>",
        "Content-Type": 'text/plain; charset="utf-8"',
        "Content-Transfer-Encoding": "base64",
    },
    base64.encodebytes("이번 분기 예산을 검토합니다. budget review for the aurora launch.".encode()).decode(),
)
_QP_EUCKR = quopri.encodestring("예산안을 첨부합니다. 확인 부탁드립니다.".encode("euc-kr")).decode()
M2 = mail(
    {
        "From": "Bob Lee <bob@acme.com>",
        "To": "Sarah Kim <sarah@acme.com>",
        "Cc": "minjun@acme.com",
        "Subject": b_word("회신: 예산 검토 회의", "euc-kr"),
        "Date": "Thu, 16 Jan 2025 10:00:00 +0000",
        "Message-ID": "<m2@acme.com>",
        "In-Reply-To": "<m1@acme.com>",
        "References": "<m1@acme.com>",
        "Content-Type": 'multipart/mixed; boundary="XX"',
    },
    "--XX\r\nContent-Type: text/plain; charset=EUC-KR\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
    + _QP_EUCKR
    + "\r\n--XX\r\nContent-Type: application/vnd.ms-excel\r\n"
    'Content-Disposition: attachment; filename="budget.xlsx"\r\nContent-Transfer-Encoding: base64\r\n\r\n'
    + base64.encodebytes(b"not really a spreadsheet").decode()
    + "--XX--\r\n",
)
M3 = mail(
    {
        "From": "sarah@acme.com",
        "To": "bob@acme.com",
        "Subject": "Re: Re: budget",
        "Date": "Mon, 20 Jan 2025 08:00:00 +0900",
        "Message-ID": "<m3@acme.com>",
        "In-Reply-To": "<m2@acme.com>",
        "Content-Type": "text/html; charset=utf-8",
    },
    "<html><head><style>p { color: red }</style></head><body><p>Thanks, the <b>aurora</b> numbers "
    "look fine</p><script>var hidden = 1;</script></body></html>",
)
M4 = mail(
    {
        "From": "Vendor News <news@vendor.example>",
        "To": "sarah@acme.com",
        "Subject": "Weekly digest",
        "Date": "Mon, 03 Feb 2025 12:00:00 +0000",
        "Message-ID": "<m4@vendor.example>",
        "Content-Type": 'multipart/alternative; boundary="AA"',
    },
    "--AA\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\nA digest about databases.\r\n"
    "--AA\r\nContent-Type: text/html; charset=us-ascii\r\n\r\n<p>A digest about databases htmlonlyword</p>\r\n"
    "--AA--\r\n",
)
M5 = mail({"From": "me@acme.com", "Subject": "undated note", "Content-Type": "text/plain"}, "aurora undated")


@pytest.fixture(scope="module")
def mbox_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mail") / "inbox.mbox"
    box = mailbox.mbox(path)
    for raw in (M1, M2, M3, M4, M5):
        box.add(raw)
    box.flush()
    box.close()
    return path


@pytest.fixture(scope="module")
def maildir_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mail") / "Maildir"
    box = mailbox.Maildir(path, create=True)
    for raw in (M1, M4, M5):
        box.add(raw)
    work = box.add_folder("Work")
    for raw in (M2, M3):
        work.add(raw)
    box.close()
    return path


def source(path: Path, **options: Any) -> MailSource:
    return MailSource("mail", MailOptions(path=path, **options), Settings())


async def ask(src: MailSource, text: str, limit: int | None = None) -> Any:
    return await src.search(SourceQuery(source="email", mode="keyword", query=text), limit=limit)


async def ids(path: Path, text: str) -> list[str]:
    return [h.meta.get("message_id", h.location) for h in (await ask(source(path), text)).hits]


@pytest.fixture(params=["mbox", "maildir"])
def box(request: pytest.FixtureRequest, mbox_path: Path, maildir_path: Path) -> Path:
    return mbox_path if request.param == "mbox" else maildir_path


async def test_korean_subjects_in_utf8_and_euc_kr_are_decoded(box: Path) -> None:
    result = await ask(source(box), "예산 검토 회의")
    titles = {h.meta["message_id"]: h.title for h in result.hits}
    assert titles["m1@acme.com"] == "예산 검토 회의"  # =?UTF-8?B?
    assert titles["m2@acme.com"] == "회신: 예산 검토 회의"  # =?EUC-KR?B?


async def test_an_euc_kr_quoted_printable_body_is_found_by_its_stem(box: Path) -> None:
    result = await ask(source(box), "예산안은 확인")  # a particle the body does not have
    assert result.hits[0].meta["message_id"] == "m2@acme.com"
    assert "예산안을 첨부합니다" in result.hits[0].text


async def test_a_korean_query_with_particles_finds_the_message(box: Path) -> None:
    assert (await ids(box, "분기를"))[:1] == ["m1@acme.com"]


async def test_html_is_reduced_to_text_and_plain_text_is_preferred(box: Path) -> None:
    result = await ask(source(box), "aurora numbers")
    assert result.hits[0].meta["message_id"] == "m3@acme.com"
    assert "Thanks, the" in result.hits[0].text
    assert "color" not in result.hits[0].text
    assert "hidden" not in result.hits[0].text
    assert await ids(box, "htmlonlyword") == []  # the text/plain alternative was indexed, not the HTML
    assert await ids(box, "databases") == ["m4@vendor.example"]


async def test_hits_carry_their_thread_author_time_and_mid_location(box: Path) -> None:
    result = await ask(source(box), "budget")
    by_id = {h.meta["message_id"]: h for h in result.hits}
    assert set(by_id) == {"m1@acme.com", "m2@acme.com", "m3@acme.com"}  # m2 by its attachment's name
    for hit in by_id.values():
        assert hit.meta["thread_id"] == "m1@acme.com"  # m3 only names m2 in In-Reply-To
        assert hit.meta["thread_subject"] == "예산 검토 회의"
    m1 = by_id["m1@acme.com"]
    assert (m1.location, m1.author, m1.kind, m1.authority) == (
        "mid:m1@acme.com",
        "Sarah Kim",
        "email",
        "email",
    )
    assert m1.timestamp == datetime(2025, 1, 15, 9, tzinfo=UTC)
    undated = (await ask(source(box), "undated")).hits[0]
    assert undated.location.startswith("mail://")
    assert undated.timestamp is None


@pytest.mark.parametrize(
    ("query", "kept", "excluded"),
    [
        ("예산 from:sarah", "m1@acme.com", "m2@acme.com"),
        ("예산 from:bob@acme.com", "m2@acme.com", "m1@acme.com"),
        ("예산 to:minjun", "m2@acme.com", "m1@acme.com"),  # a Cc recipient
        ("aurora to:bob", "m3@acme.com", "m1@acme.com"),
        ("예산 subject:회신", "m2@acme.com", "m1@acme.com"),
        ("subject:digest", "m4@vendor.example", "m1@acme.com"),
        ("예산 after:2025/01/16", "m2@acme.com", "m1@acme.com"),  # on or after the day
        ("예산 before:2025-01-16", "m1@acme.com", "m2@acme.com"),  # before the day only
        ("aurora after:2025/01/19", "m3@acme.com", "m1@acme.com"),  # 08:00 +0900 is the 19th in UTC
        ("aurora before:1736985600", "m1@acme.com", "m3@acme.com"),  # epoch seconds: 2025-01-16
        ("aurora after:2000/01/01", "m1@acme.com", "mail://"),  # undated mail never passes a date filter
        ("예산 has:attachment", "m2@acme.com", "m1@acme.com"),
        (
            "budget -aurora",
            "m2@acme.com",
            "m3@acme.com",
        ),  # m2 by its attachment's name; m3 says aurora in HTML
        ('"budget review"', "m1@acme.com", "m3@acme.com"),
    ],
)
async def test_every_filter_keeps_and_excludes(box: Path, query: str, kept: str, excluded: str) -> None:
    found = " ".join(await ids(box, query))
    assert kept in found
    assert excluded not in found


async def test_folders_are_labels_in_a_maildir(maildir_path: Path, mbox_path: Path) -> None:
    assert await ids(maildir_path, "예산 label:work") == ["m2@acme.com"]
    assert await ids(maildir_path, "예산 in:inbox") == ["m1@acme.com"]
    assert len(await ids(maildir_path, "예산 in:anywhere")) == 2
    missing = await ask(source(maildir_path), "예산 label:nowhere")
    assert missing.hits == ()
    assert "no folder 'nowhere'" in missing.warnings[0]
    on_mbox = await ask(source(mbox_path), "예산 label:work")
    assert len(on_mbox.hits) == 2
    assert "an mbox has no folders" in on_mbox.warnings[0]


async def test_unsupported_filters_and_bad_dates_are_warnings(mbox_path: Path) -> None:
    result = await ask(source(mbox_path), "예산 is:unread after:soon has:drive")
    text = " ".join(result.warnings)
    for part in ("'is:unread' is not supported", "after:soon is not a date", "'has:drive' is not supported"):
        assert part in text
    assert len(result.hits) == 2


async def test_filters_alone_list_newest_first(mbox_path: Path) -> None:
    assert await ids(mbox_path, "from:acme.com") == [
        "m3@acme.com",
        "m2@acme.com",
        "m1@acme.com",
        "mail://inbox/4",
    ]


async def test_info_reports_size_and_freshness(box: Path) -> None:
    info = await source(box).info()
    assert (info.ready, info.items) == (True, 5)
    assert info.updated == datetime(2025, 2, 3, 12, tzinfo=UTC)
    assert "3 threads" in info.detail
    assert "bytes" in info.detail


def test_base_subject_strips_reply_prefixes() -> None:
    assert base_subject("Re: Fwd: 회신: Budget") == "Budget"
    assert base_subject("Regarding the budget") == "Regarding the budget"


async def test_missing_and_wrong_shapes_are_typed_errors(tmp_path: Path) -> None:
    with pytest.raises(SourceUnavailable, match="does not exist"):
        await ask(source(tmp_path / "nope.mbox"), "x")
    (tmp_path / "notes.txt").write_text("hello, not mail", encoding="utf-8")
    with pytest.raises(SourceFormatError, match="not an mbox"):
        await ask(source(tmp_path / "notes.txt"), "x")
    (tmp_path / "folder").mkdir()
    with pytest.raises(SourceFormatError, match="not a Maildir"):
        await ask(source(tmp_path / "folder"), "x")
    info = await source(tmp_path / "folder").info()
    assert not info.ready
    assert "not a Maildir" in info.detail
    with pytest.raises(SourceError, match="no path configured"):
        await MailSource("m", MailOptions(), Settings()).search(
            SourceQuery(source="email", mode="keyword", query="x")
        )


async def test_a_bad_or_oversized_message_is_skipped_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "box.mbox"
    box = mailbox.mbox(path)
    box.add(M1)
    box.add(mail({"Subject": "huge"}, "x" * 5000))
    box.flush()
    box.close()
    monkeypatch.setattr(_mailbox, "MAX_MESSAGE_BYTES", 4000)
    result = await ask(source(path), "예산")
    assert [h.meta["message_id"] for h in result.hits] == ["m1@acme.com"]
    assert "1 unreadable message(s) skipped" in result.warnings[0]


async def test_the_index_is_rebuilt_when_mail_arrives(tmp_path: Path) -> None:
    path = tmp_path / "Maildir"
    box = mailbox.Maildir(path, create=True)
    box.add(M1)
    src = source(path)
    assert await src.search(SourceQuery(source="email", mode="keyword", query="digest")) is not None
    first = src._cache.value
    assert (await ask(src, "digest")).hits == ()
    assert src._cache.value is first
    box.add(M4)
    box.close()
    assert [h.title for h in (await ask(src, "digest")).hits] == ["Weekly digest"]
    await src.aclose()


def test_the_registry_builds_a_mail_source_from_a_spec(mbox_path: Path) -> None:
    assert isinstance(resolve_source(f"mail:{mbox_path}", Settings()), MailSource)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.binary(max_size=2000),
    header=st.text(max_size=200),
    query=st.text(max_size=80),
)
async def test_any_bytes_and_query_give_a_result_or_a_source_error(
    tmp_path: Path, body: bytes, header: str, query: str
) -> None:
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "x.mbox"
    raw = b"From x@y Thu Jan  1 00:00:00 2025\n"
    raw += (
        b"Subject: "
        + header.encode("utf-8", "surrogatepass")
        + b"\nDate: "
        + header[:40].encode("utf-8", "surrogatepass")
    )
    path.write_bytes(raw + b"\n\n" + body)
    try:
        result = await ask(source(path), query)
    except SourceError:
        return
    assert all(h.kind == "email" for h in result.hits)


@settings(max_examples=60, deadline=None)
@given(query=st.text(max_size=200), limit=st.integers(min_value=-5, max_value=500) | st.none())
async def test_any_query_gives_a_result(mbox_path: Path, query: str, limit: int | None) -> None:
    result = await ask(source(mbox_path), query, limit=limit)
    assert len(result.hits) <= max(1, min(limit or 10, 200))
