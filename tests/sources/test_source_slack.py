"""The Slack export source: a folder and a zip in Slack's documented export shape, written here."""

from __future__ import annotations

import json
import tempfile
import zipfile
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
from sourcewise.sources.messages.slack import SlackOptions, SlackSource

PARENT_TS = "1736942400.000100"  # 2025-01-15 12:00 UTC
USERS = [
    {
        "id": "U1",
        "name": "sarah",
        "real_name": "Sarah Kim",
        "profile": {"real_name": "Sarah Kim", "display_name": "sarah"},
    },
    {"id": "U2", "name": "minjun.park", "profile": {"real_name": "박민준", "display_name": "minjun"}},
    {"id": "U3", "name": "bob", "profile": {"real_name": "Bob Lee", "display_name": ""}},
]
CHANNELS = [
    {"id": "C1", "name": "engineering", "created": 1700000000, "members": ["U1", "U2", "U3"]},
    {"id": "C2", "name": "random", "created": 1700000000, "members": ["U1", "U3"]},
]
DAYS: dict[str, list[dict[str, Any]]] = {
    "engineering/2025-01-15.json": [
        {"type": "message", "subtype": "channel_join", "user": "U2", "text": "<@U2> has joined the channel", "ts": "1736942300.000050"},
        {
            "type": "message", "user": "U1", "ts": PARENT_TS, "thread_ts": PARENT_TS, "reply_count": 2,
            "replies": [{"user": "U3", "ts": "1736942500.000200"}, {"user": "U2", "ts": "1737021600.000300"}],
            "text": "Aurora migration plan: we move the cluster next week. cc <@U3> &amp; <#C2|random>",
        },
        {"type": "message", "user": "U3", "ts": "1736942500.000200", "thread_ts": PARENT_TS, "parent_user_id": "U1",
         "text": "Looks good, ship it after the freeze"},
    ],
    "engineering/2025-01-16.json": [
        {"type": "message", "user": "U2", "ts": "1737021600.000300", "thread_ts": PARENT_TS, "parent_user_id": "U1",
         "text": "결론: 배포를 진행하는 절차는 다음 주 월요일에 시작합니다"},
        {"type": "message", "subtype": "file_share", "user": "U2", "ts": "1737021700.000400", "text": "budget sheet for aurora",
         "files": [{"id": "F1", "name": "budget.xlsx", "title": "Q1 budget", "mimetype": "application/vnd.ms-excel"}]},
    ],
    "random/2025-01-10.json": [
        {"type": "message", "user": "U3", "ts": "1736499600.000500", "text": "lunch anyone? <https://example.com/menu|menu>"},
    ],
    "random/2025-02-03.json": [
        {"type": "message", "user": "U1", "ts": "1738576800.000600", "text": "aurora dashboard is slow today"},
    ],
}  # fmt: skip


def write_export(root: Path, days: dict[str, list[dict[str, Any]]] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "users.json").write_text(json.dumps(USERS), encoding="utf-8")
    (root / "channels.json").write_text(json.dumps(CHANNELS), encoding="utf-8")
    for name, messages in (days or DAYS).items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    return root


def zip_export(folder: Path, target: Path, extra: dict[str, bytes] | None = None, top: str = "") -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*.json")):
            archive.write(path, top + path.relative_to(folder).as_posix())
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return target


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_export(tmp_path_factory.mktemp("slack") / "export")


@pytest.fixture(scope="module")
def export_zip(export_dir: Path) -> Path:
    return zip_export(export_dir, export_dir.parent / "export.zip")


def source(path: Path, **options: Any) -> SlackSource:
    return SlackSource("team", SlackOptions(path=path, **options), Settings())


async def ask(src: SlackSource, text: str, limit: int | None = None) -> Any:
    return await src.search(SourceQuery(source="chat", mode="keyword", query=text), limit=limit)


async def texts(path: Path, text: str) -> list[str]:
    result = await ask(source(path), text)
    return [h.snippet for h in result.hits]


@pytest.mark.parametrize("kind", ["folder", "zip"])
async def test_folder_and_zip_find_the_same_messages(kind: str, export_dir: Path, export_zip: Path) -> None:
    result = await ask(source(export_dir if kind == "folder" else export_zip), "aurora")
    channels = sorted(h.meta["channel"] for h in result.hits)
    assert channels == ["engineering", "engineering", "random"]  # the thread once, the file share, #random
    thread = next(h for h in result.hits if h.meta["messages"] == "3")
    assert thread.author == "Sarah Kim"
    for part in ("@Bob Lee", "#random", "&", "Looks good", "결론"):  # mentions resolved, the thread kept
        assert part in thread.text
    assert thread.timestamp == datetime(2025, 1, 15, 12, 0, 0, 100, tzinfo=UTC)
    assert (thread.kind, thread.source) == ("chat", "team")


async def test_a_korean_query_with_particles_finds_the_conclusion(export_dir: Path) -> None:
    result = await ask(source(export_dir), "배포 절차는")
    assert result.hits, "the Korean reply was not found"
    hit = result.hits[0]
    assert "배포를 진행하는" in hit.snippet
    assert hit.author == "박민준"
    assert hit.authority == "thread_conclusion"
    assert hit.meta["thread_ts"] == PARENT_TS


async def test_a_reply_is_found_by_its_threads_topic_and_grouped_with_it(export_dir: Path) -> None:
    result = await ask(source(export_dir), "freeze")
    assert [h.author for h in result.hits] == ["Bob Lee"]
    assert result.hits[0].authority == "chat"
    assert result.hits[0].title.startswith("#engineering: Aurora migration plan")


@pytest.mark.parametrize(
    ("query", "kept", "excluded"),
    [
        ("aurora from:bob freeze", "Looks good", "Aurora migration"),
        ("aurora from:<@U1>", "Aurora migration", "budget sheet"),
        ("aurora from:Sarah", "aurora dashboard", "budget sheet"),
        ("aurora from:@minjun", "budget sheet", "aurora dashboard"),
        ("aurora in:#random", "aurora dashboard", "budget sheet"),
        ("aurora in:engineering", "budget sheet", "aurora dashboard"),
        ("aurora in:C1", "budget sheet", "aurora dashboard"),
        ("aurora after:2025-01-15", "budget sheet", "Aurora migration"),  # the 15th itself is excluded
        ("aurora after:2025-01-14", "Aurora migration", "lunch"),
        ("aurora before:2025-01-16", "Aurora migration", "budget sheet"),  # the 16th itself is excluded
        ("aurora before:2025-01-17", "budget sheet", "aurora dashboard"),
        ("aurora on:2025-01-16", "budget sheet", "Aurora migration"),
        ("aurora during:2025-02", "aurora dashboard", "budget sheet"),
        ("aurora during:2025", "budget sheet", "nothing-else"),
        ("aurora after:2025-01", "aurora dashboard", "budget sheet"),  # after a month: from the next month
        ("aurora is:thread", "Aurora migration", "aurora dashboard"),
        ("aurora has:file", "budget sheet", "Aurora migration"),
        ("has:link", "lunch anyone", "aurora dashboard"),
        ("aurora -dashboard", "budget sheet", "aurora dashboard"),
        ('"migration plan"', "Aurora migration", "budget sheet"),
    ],
)
async def test_every_filter_keeps_and_excludes(
    export_dir: Path, query: str, kept: str, excluded: str
) -> None:
    found = " | ".join(await texts(export_dir, query))
    assert kept in found
    assert excluded not in found


async def test_filters_alone_list_newest_first(export_dir: Path) -> None:
    result = await ask(source(export_dir), "in:#random")
    assert [h.snippet[:5] for h in result.hits] == ["auror", "lunch"]


async def test_unsupported_filters_and_bad_dates_are_warnings(export_dir: Path) -> None:
    result = await ask(source(export_dir), "aurora is:saved label:x after:someday from:nobody")
    text = " ".join(result.warnings)
    assert "'is:saved' is not supported" in text
    assert "'label:x' is not supported" in text
    assert "after:someday is not a day" in text
    assert "from:nobody: no user" in text
    assert result.hits == ()


async def test_permalinks_when_the_workspace_is_configured(export_dir: Path) -> None:
    plain = await ask(source(export_dir), "freeze")
    assert plain.hits[0].location == "slack://engineering/1736942500.000200"
    linked = await ask(source(export_dir, workspace_url="https://acme.slack.com/"), "freeze")
    assert linked.hits[0].location == (
        f"https://acme.slack.com/archives/C1/p1736942500000200?thread_ts={PARENT_TS}&cid=C1"
    )
    parent = await ask(source(export_dir, workspace_url="https://acme.slack.com"), "migration")
    assert parent.hits[0].location == "https://acme.slack.com/archives/C1/p1736942400000100"


def test_bad_options_are_config_errors() -> None:
    from sourcewise.errors import ConfigError

    for options in ({"workspace_url": "http://user:pw@acme.slack.com"}, {"timezone": "Mars/Olympus"}):
        with pytest.raises(ConfigError):
            resolve_source("x", Settings(sources={"x": {"type": "slack", "path": "/tmp/x", **options}}))


async def test_the_timezone_decides_which_day_a_message_is_on(export_dir: Path) -> None:
    # 2025-01-15 12:00 UTC is still the 15th in Seoul, but 2025-01-16 10:00 UTC is the 16th 19:00 there.
    src = source(export_dir, timezone="Pacific/Kiritimati")  # UTC+14: the parent is on the 16th there
    found = [h.snippet for h in (await ask(src, "aurora on:2025-01-16")).hits]
    assert any("Aurora migration" in s for s in found)


async def test_info_reports_size_and_freshness(export_zip: Path) -> None:
    info = await source(export_zip).info()
    assert (info.ready, info.items) == (True, 6)
    assert info.updated == datetime(2025, 2, 3, 10, 0, 0, 600, tzinfo=UTC)
    for part in ("2 channels", "1 threads", "bytes read"):
        assert part in info.detail
    missing = await source(export_zip.parent / "nope.zip").info()
    assert not missing.ready


async def test_the_index_is_built_once_and_rebuilt_when_the_export_changes(tmp_path: Path) -> None:
    root = write_export(tmp_path / "e")
    src = source(root)
    await ask(src, "aurora")
    first = src._cache.value
    await ask(src, "lunch")
    assert src._cache.value is first
    (root / "channels.json").write_text(
        json.dumps([*CHANNELS, {"id": "C3", "name": "new"}]), encoding="utf-8"
    )
    await ask(src, "lunch")
    assert src._cache.value is not first
    await src.aclose()
    await src.aclose()


async def test_missing_path_and_wrong_shapes_are_typed_errors(tmp_path: Path) -> None:
    with pytest.raises(SourceUnavailable, match="does not exist"):
        await ask(source(tmp_path / "missing"), "x")
    with pytest.raises(SourceUnavailable, match="no path configured"):
        await SlackSource("s", SlackOptions(), Settings()).search(
            SourceQuery(source="chat", mode="keyword", query="x")
        )
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceFormatError, match=r"no channels\.json"):
        await ask(source(tmp_path / "empty"), "x")
    bad = write_export(tmp_path / "bad")
    (bad / "channels.json").write_text('{"channels": []}', encoding="utf-8")
    with pytest.raises(SourceFormatError, match=r"channels\.json: expected a list"):
        await ask(source(bad), "x")
    (bad / "channels.json").write_text("[[[", encoding="utf-8")
    with pytest.raises(SourceFormatError, match="not valid JSON"):
        await ask(source(bad), "x")
    (tmp_path / "junk.zip").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(SourceFormatError, match="readable zip"):
        await ask(source(tmp_path / "junk.zip"), "x")


async def test_a_bad_day_file_or_message_is_skipped_and_counted(tmp_path: Path) -> None:
    days = dict(DAYS)
    days["random/2025-01-11.json"] = [{"ts": "not-a-number", "text": "x"}, "just a string", {"text": "no ts"}]
    root = write_export(tmp_path / "e", days)
    (root / "random" / "2025-01-12.json").write_text("{broken", encoding="utf-8")
    result = await ask(source(root), "lunch")
    assert [h.author for h in result.hits] == ["Bob Lee"]
    assert any("4 unreadable" in w for w in result.warnings)


async def test_zip_members_with_unsafe_names_are_skipped(export_dir: Path, tmp_path: Path) -> None:
    evil = json.dumps([{"ts": "1736499600.1", "user": "U1", "text": "aurora escape"}]).encode()
    target = zip_export(
        export_dir, tmp_path / "evil.zip", {"../random/2025-01-01.json": evil, "/abs/2025-01-01.json": evil}
    )
    src = source(target)
    assert "escape" not in " ".join(await texts(target, "aurora"))
    assert "2 zip member(s) with unsafe names skipped" in (await src.info()).detail


async def test_a_zip_bomb_is_refused(export_dir: Path, tmp_path: Path) -> None:
    target = zip_export(
        export_dir, tmp_path / "bomb.zip", {"random/2025-03-01.json": b"[" + b" " * (20 << 20) + b"]"}
    )
    with pytest.raises(SourceFormatError, match="zip bomb"):
        await ask(source(target), "aurora")


async def test_an_export_under_one_top_folder_is_read(export_dir: Path, tmp_path: Path) -> None:
    target = zip_export(export_dir, tmp_path / "nested.zip", top="acme-export/")
    assert "lunch anyone? menu (https://example.com/menu)" in (await texts(target, "lunch"))[0]


async def test_the_registry_builds_a_slack_source_from_a_spec(export_zip: Path) -> None:
    src = resolve_source(f"slack:{export_zip}", Settings())
    assert isinstance(src, SlackSource)
    assert (await ask(src, "lunch")).hits


KEYS = [
    "ts",
    "text",
    "user",
    "thread_ts",
    "files",
    "id",
    "name",
    "profile",
    "reply_count",
    "subtype",
    "title",
]
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(users=_json, channels=_json, day=_json, query=st.text(max_size=80))
async def test_any_json_shape_and_query_gives_a_result_or_a_source_error(
    tmp_path: Path, users: Any, channels: Any, day: Any, query: str
) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    (root / "users.json").write_text(json.dumps(users), encoding="utf-8")
    (root / "channels.json").write_text(json.dumps(channels), encoding="utf-8")
    (root / "general").mkdir()
    (root / "general" / "2025-01-01.json").write_text(json.dumps(day), encoding="utf-8")
    try:
        result = await ask(source(root), query)
    except SourceError:
        return
    assert all(h.kind == "chat" for h in result.hits)


@settings(max_examples=60, deadline=None)
@given(query=st.text(max_size=200), limit=st.integers(min_value=-5, max_value=500) | st.none())
async def test_any_query_on_a_good_export_gives_a_result(
    export_dir: Path, query: str, limit: int | None
) -> None:
    result = await ask(source(export_dir), query, limit=limit)
    assert len(result.hits) <= max(1, min(limit or 10, 200))
