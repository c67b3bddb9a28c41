"""``mcp`` sources against a real MCP server written here (tests/mcp_chat_server.py, over stdio,
and over Streamable HTTP where only its answers are under test): the question rendered in the chat
kind's own syntax, filters sent as fields, one connection per session, a crashed server started
again once, a hanging one costing only its own results, bad configuration and bad answers reported
per source; hostile answers (Hypothesis) never escape as anything but a ``ParseError``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sourcewise import ConfigError, ParseError, Session, load_settings
from sourcewise.config import Settings
from sourcewise.doors.service import DoorSettings, Service
from sourcewise.errors import InvalidOption
from sourcewise.loops.ask import aask
from sourcewise.models import SourceQuery
from sourcewise.planning.routing import plan
from sourcewise.sources.mcp.read import MAX_FIELD, MAX_ITEMS, ResultShape, fill_arguments, read_records
from sourcewise.sources.mcp.source import presets

from doorkit import uvicorn_thread

SERVER = Path(__file__).parent.parent / "mcp_chat_server.py"
TODAY = date(2025, 1, 20)
MESSAGES = {
    "items": "messages",
    "location": "permalink",
    "title": "channel",
    "author": "user",
    "timestamp": "ts",
}


def chat(tmp_path: Path, tool: str = "search", **extra: Any) -> dict[str, Any]:
    """A ``[sources.NAME]`` section for the test chat server, logging its calls in tmp_path."""
    return {
        "type": "mcp",
        "command": [sys.executable, str(SERVER)],
        "env": {"CHAT_LOG": str(tmp_path / "chat.log")},
        "tool": tool,
        "kind": "chat",
        "arguments": {"query": "{query}", "limit": "{limit}"},
        "results": MESSAGES,
        **extra,
    }


def over_http(section: dict[str, Any], url: str) -> dict[str, Any]:
    """``section`` reaching the module's server over Streamable HTTP (``chat_url``), for tests of what
    the server answers or is sent rather than of starting it: each stdio start is seconds of imports.
    That server runs in this process and logs to the ``CHAT_LOG`` of the test's environment."""
    return {k: v for k, v in section.items() if k not in ("command", "env")} | {"url": url}


def calls(tmp_path: Path) -> list[dict[str, Any]]:
    log = tmp_path / "chat.log"
    return [json.loads(line) for line in log.read_text("utf-8").splitlines()] if log.exists() else []


def setup(tmp_path: Path, **sources: dict[str, Any]) -> Settings:
    # a busy machine starts a Python server in seconds: generous deadlines, no web
    return load_settings(state_dir=tmp_path / "state", source_timeout=60, providers=[], sources=sources)


async def test_the_question_reaches_the_chat_server_in_slack_syntax(
    tmp_path: Path, chat_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHAT_LOG", str(tmp_path / "chat.log"))
    question = "what did we decide about the API migration in #engineering last week"
    async with Session(setup(tmp_path, team=over_http(chat(tmp_path), chat_url))) as session:
        answer = await aask(question, sources=["team"], session=session, today=TODAY)
        source = session.source("team")
    sent = calls(tmp_path)[0]["query"]
    wanted = plan(question, ["chat"], today=TODAY).constraints
    assert wanted.after is not None
    assert wanted.before is not None
    assert "in:#engineering" in sent
    # Slack's after:/before: leave out the day named: one day wider on each side
    assert f"after:{(wanted.after - timedelta(days=1)).isoformat()}" in sent
    assert f"before:{(wanted.before + timedelta(days=1)).isoformat()}" in sent
    assert "API migration" in sent
    assert source.kind == "chat"
    assert answer.reports[0].status == "ok", answer.reports
    hit = next(h.hit for h in answer.hits if h.hit.source == "team")
    assert hit.location.startswith("https://team.slack.test/archives/engineering/")
    assert hit.author in ("sarah", "tom")
    assert hit.timestamp is not None
    assert hit.timestamp.year == 2025
    assert hit.authority == "chat"


async def test_author_and_thread_filters_are_written_as_slack_writes_them(
    tmp_path: Path, chat_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHAT_LOG", str(tmp_path / "chat.log"))
    question = "API migration from:sarah in:#engineering type:thread after:2025-01-10"
    async with Session(setup(tmp_path, team=over_http(chat(tmp_path), chat_url))) as session:
        await aask(question, sources=["team"], session=session, today=TODAY)
    sent = calls(tmp_path)[0]["query"]
    # a typed after: is Slack's already (the day named left out): it reaches the server as typed
    assert {"from:sarah", "in:#engineering", "is:thread", "after:2025-01-10"} <= set(sent.split())


async def test_filters_the_tool_takes_as_fields_leave_the_query(
    tmp_path: Path, chat_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHAT_LOG", str(tmp_path / "chat.log"))
    fields = {"query": "{query}", "channel": "{in}", "user": "{from}", "after": "{after}",
              "before": "{before}", "limit": "{limit}"}  # fmt: skip
    section = over_http(chat(tmp_path, "search_fields", arguments=fields), chat_url)
    async with Session(setup(tmp_path, team=section)) as session:
        answer = await aask(
            "API migration from:sarah in:#engineering last week",
            sources=["team"],
            session=session,
            today=TODAY,
        )
    call = calls(tmp_path)[0]
    assert call["channel"] == "engineering"
    assert call["user"] == "sarah"
    assert (call["after"], call["before"]) == ("2025-01-13", "2025-01-19")  # the days wanted, inclusive
    assert "in:" not in call["query"]
    assert "from:" not in call["query"]
    assert "after:" not in call["query"]
    assert isinstance(call["limit"], int)
    assert answer.reports[0].status == "ok"


async def test_one_connection_per_session_and_a_crashed_server_starts_again_once(tmp_path: Path) -> None:
    query = SourceQuery(source="chat", mode="keyword", query="API migration")
    async with Session(setup(tmp_path, crashy=chat(tmp_path, "crash_once"))) as session:
        source = session.source("crashy")
        first = await source.search(query)  # the server dies; started again, the call repeated
        second = await source.search(query)
        info = await source.info()
    assert first.hits
    assert second.hits
    assert len(calls(tmp_path)) == 3  # the call that crashed, its repeat, the second search
    assert info.ready
    assert "connected" in info.detail
    assert "crash_once" in info.detail
    assert source.connection.restarts_left == 0
    assert (tmp_path / "state" / "mcp-crashy.log").is_file()  # the server's stderr, not the terminal


async def test_a_hanging_server_costs_only_its_own_results(tmp_path: Path, chat_url: str) -> None:
    # 8 s: time for the stuck server to start under load, so that the deadline cuts its hanging call
    # (at 4 s a loaded machine cut the start instead, and the call's timeout path went untested).
    # The stuck one is a process (closing the session ends its hanging call with it); the one that
    # answers is the module's server over HTTP.
    sources = {"team": over_http(chat(tmp_path), chat_url), "stuck": chat(tmp_path, "hang", timeout=8)}
    async with Session(setup(tmp_path, **sources)) as session:
        answer = await aask("API migration", sources=["team", "stuck"], session=session, today=TODAY)
    by = {r.source: r for r in answer.reports}
    assert by["stuck"].status == "timeout"
    assert by["team"].status == "ok"
    assert answer.hits
    assert all(h.hit.source == "team" for h in answer.hits)
    assert answer.citations


async def test_misconfigured_and_misbehaving_servers_are_reports_with_the_reason(
    tmp_path: Path, chat_url: str
) -> None:
    # What the server answers is under test, not how it starts: the four bad sections reach the
    # module's server over HTTP; the good one starts its own over stdio.
    sources = {
        "wrongarg": over_http(chat(tmp_path, arguments={"q": "{query}"}), chat_url),
        "notool": over_http(chat(tmp_path, "nope"), chat_url),
        "typo": over_http(chat(tmp_path, arguments={"query": "{query}", "limit": "n={limit}"}), chat_url),
        "junk": over_http(chat(tmp_path, "garbage"), chat_url),
        "absent": {"type": "mcp", "command": [str(tmp_path / "no-such-server")], "tool": "search"},
        "good": chat(tmp_path),
    }
    async with Session(setup(tmp_path, **sources)) as session:
        answer = await aask("API migration", sources=list(sources), session=session, today=TODAY)
        infos = {name: await session.source(name).info() for name in ("notool", "absent", "good")}
    by = {r.source: r for r in answer.reports}
    assert "q not taken by the tool" in str(by["wrongarg"].error)
    assert "query (string, required)" in str(by["wrongarg"].error)
    assert "no tool 'nope'" in str(by["notool"].error)
    assert "search_fields" in str(by["notool"].error)
    assert "'limit' is sent as a string but the tool wants integer" in str(by["typo"].error)
    assert "no list of results" in str(by["junk"].error)
    assert by["absent"].status == "unavailable"
    assert "cannot start" in str(by["absent"].error)
    assert {by[n].status for n in ("wrongarg", "notool", "typo", "junk")} == {"failed"}
    assert by["good"].status == "ok"
    assert not infos["notool"].ready
    assert "failed: source 'notool'" in infos["notool"].detail
    assert not infos["absent"].ready
    assert "cannot start" in infos["absent"].detail
    assert infos["good"].ready
    assert infos["good"].location == f"{sys.executable} {SERVER}"


@pytest.fixture(scope="module")
def chat_url() -> Iterator[str]:
    """The chat server once for the module over Streamable HTTP, for tests of what its answers
    hold rather than of starting it (each stdio start is seconds of imports)."""
    from mcp_chat_server import app

    with uvicorn_thread(app.streamable_http_app()) as base:
        yield f"{base}/mcp"


async def test_hostile_answers_are_cleaned_capped_or_a_parse_error(tmp_path: Path, chat_url: str) -> None:
    evil = json.dumps({"results": [{"title": "\x1b[31mred\x1b[0m \u202eevil", "url": "https://x.test/a",
                                    "text": "ok\x07" + "y" * 100_000}]})  # fmt: skip
    many = json.dumps({"results": [{"url": f"https://x.test/{i}", "title": str(i)} for i in range(3000)]})
    payloads = {
        "evil": {"payload": evil},
        "many": {"payload": many},
        "huge": {"payload": "x" * 100_000, "repeat": 25},
        "shape": {"payload": '{"results": [1, 2]}'},
    }
    sources = {name: {"type": "mcp", "url": chat_url, "tool": "hostile", "kind": "chat", "arguments": arguments,
                      "results": {}} for name, arguments in payloads.items()}  # fmt: skip
    query = SourceQuery(source="chat", mode="keyword", query="anything")
    async with Session(setup(tmp_path, **sources)) as session:
        hit = (await session.source("evil").search(query)).hits[0]
        capped = await session.source("many").search(query, limit=200)
        for name, why in (("huge", "longer than"), ("shape", "not an object")):
            with pytest.raises(ParseError, match=why):
                await session.source(name).search(query)
    assert "\x1b" not in hit.title
    assert "\u202e" not in hit.title
    assert hit.title.endswith("evil")
    assert "\x07" not in hit.text
    assert len(hit.text) <= MAX_FIELD["text"]
    assert len(capped.hits) == 200


async def test_an_mcp_source_is_only_ever_a_configured_name(tmp_path: Path) -> None:
    async with Session(setup(tmp_path, team=chat(tmp_path))) as session:
        with pytest.raises(ConfigError, match="configured by name"):
            session.source("mcp:/bin/sh")
        with pytest.raises(ConfigError, match="configured by name"):
            session.source("mcp")
        service = Service(session, DoorSettings())
        with pytest.raises(InvalidOption, match="only configured names"):
            service.door_sources(["mcp"])
        assert service.door_sources(["team"]) == ["team"]
    for section, why in (({"preset": "nope"}, "no preset 'nope'"), ({"tool": "t"}, "either `command`")):
        async with Session(setup(tmp_path, x={"type": "mcp", **section})) as session:
            with pytest.raises(ConfigError, match=why):
                session.source("x")


async def test_every_preset_is_a_valid_source(tmp_path: Path) -> None:
    names = sorted(presets())
    assert {"github", "slack", "jira", "gdrive", "postgres", "sourcewise"} <= set(names)
    async with Session(setup(tmp_path, **{n: {"type": "mcp", "preset": n} for n in names})) as session:
        kinds = {n: session.source(n).kind for n in names}
    assert kinds["slack"] == "chat"
    assert kinds["github"] == "project_tracker"
    assert kinds["gdrive"] == "cloud_storage"


def test_a_placeholder_with_nothing_to_say_leaves_its_argument_out() -> None:
    mapping = {"q": "{query}", "n": "{limit}", "ch": "#{in}", "a": "{after}", "s": ["kb", "{in}"], "f": True}
    assert fill_arguments(mapping, {"query": "x", "limit": 5}) == {"q": "x", "n": 5, "s": ["kb"], "f": True}
    filled = fill_arguments(mapping, {"query": "x", "limit": 5, "in": "eng", "after": "2025-01-01"})
    assert filled["ch"] == "#eng"
    assert filled["a"] == "2025-01-01"
    assert filled["s"] == ["kb", "eng"]
    assert fill_arguments({"sql": "'{query_sql}'"}, {"query_sql": "it''s"}) == {"sql": "'it''s'"}


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["results", "items", "messages", "url", "title", "text", "ts", "user", "hits", "x"]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)
_shapes = st.builds(
    ResultShape,
    format=st.sampled_from(["json", "csv"]),
    items=st.none() | st.sampled_from(["results", "results[].hits", "messages[]", "a.b"]),
    location=st.none() | st.sampled_from(["url", "x://{title}", "user.name"]),
    timestamp=st.none() | st.just("ts"),
)


@settings(deadline=None)
@given(_json, st.lists(st.text(max_size=80) | st.builds(json.dumps, _json), max_size=3), _shapes)
def test_any_answer_gives_clean_records_or_a_parse_error(
    structured: Any, texts: list[str], shape: ResultShape
) -> None:
    try:
        found = read_records(structured, texts, shape, "src")
    except ParseError as exc:
        named = exc.provider
        assert named == "src"
        return
    assert len(found.items) <= MAX_ITEMS
    for record in found.items:
        for name, value in record.items():
            assert isinstance(value, str)
            assert len(value) <= MAX_FIELD.get(name, 200)
            assert not any(ord(c) < 32 and c not in "\n\t" for c in value), (name, value)


async def test_the_docs_show_a_valid_configuration_for_every_preset(tmp_path: Path) -> None:
    import tomllib

    text = (Path(__file__).parents[2] / "docs" / "mcp-sources.md").read_text("utf-8")
    blocks = [b.split("```", 1)[0] for b in text.split("```toml\n")[1:]]
    assert len(blocks) >= len(presets())
    shown: set[str] = set()
    for block in blocks:
        sections = tomllib.loads(block)["sources"]
        async with Session(setup(tmp_path, **sections)) as session:
            for name, section in sections.items():
                source = session.source(name)  # validated and built, not connected
                assert source.type == "mcp"
                shown.add(section.get("preset", ""))
    assert set(presets()) <= shown


@settings(deadline=None)
@given(st.dictionaries(st.sampled_from(["query", "limit", "after", "before", "from", "in", "query_sql"]),
                       st.text(max_size=40) | st.integers()),
       st.dictionaries(st.text(max_size=8), st.text(max_size=30) | st.lists(st.text(max_size=10), max_size=3)
                       | st.booleans() | st.integers()))  # fmt: skip
def test_filling_arguments_takes_any_values(values: dict[str, Any], mapping: dict[str, Any]) -> None:
    filled = fill_arguments(mapping, values)
    assert set(filled) <= set(mapping)
    for name, value in filled.items():
        assert isinstance(value, type(mapping[name])) or mapping[name].strip() in ("{limit}", "{max_results}")


@settings(deadline=None)
@given(
    _json,
    st.dictionaries(st.sampled_from(["query", "limit", "x"]), st.sampled_from(["{query}", "{limit}", "a"])),
)
def test_any_input_schema_is_checked_or_a_config_error(schema: Any, arguments: dict[str, Any]) -> None:
    from types import SimpleNamespace

    from sourcewise.sources.mcp.schema import check_arguments, describe_schema

    tool = SimpleNamespace(name="search", input_schema=schema)
    try:
        check_arguments("s", "search", arguments, [tool])
    except ConfigError as exc:
        said = str(exc)
        assert "source 's'" in said
    if isinstance(schema, dict):
        assert isinstance(describe_schema(schema), str)
