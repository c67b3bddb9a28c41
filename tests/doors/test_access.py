"""Hostile access: a key limited to one source tries to reach another through every door (the HTTP
API and MCP over HTTP; ask's fan-out, retrieve, the source search, specs such as code:PATH, error
messages, reports and their timing, the open pages); a wrong or missing key is a 401 naming nothing.
Real servers on 127.0.0.1, real knowledge bases; the "boss" key that may read the secret source is
the control that shows the secret is there to leak."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from sourcewise import KnowledgeBase, load_settings
from sourcewise.access import AccessDenied, Grant, authenticate, bound, check, grants, hash_key
from sourcewise.config import Settings
from sourcewise.doors.http import create_app
from sourcewise.doors.mcp import create_http_app
from sourcewise.doors.service import DoorSettings
from sourcewise.errors import ConfigError, InvalidOption

from doorkit import uvicorn_thread

ALICE, BOSS = "alice-key-0123456789", "boss-key-9876543210"
SECRET = "zanzibar"  # only in the hr source (and in the questions that look for it)
MARK = "quokka"  # only in the hr source: never asked for, it shows when hr's text leaks
LEAKS = ('"hr"', "'hr'", "hr:", "hr.sqlite3", MARK)


def _settings(tmp_path: Path) -> Settings:
    """Two knowledge bases of files everyone may read (in a folder open all the way up: these keys
    name no user, so they find public files only), each source its own key's."""
    for name, text in (("docs", "# Deploying\n\nTo roll back a deployment, redeploy the previous tag.\n"),
                       ("hr", f"# Payroll\n\nThe {SECRET} payroll deployment runs on the first day of the {MARK} month.\n")):  # fmt: skip
        folder = tmp_path / name
        folder.mkdir()
        (folder / f"{name}.md").write_text(text, "utf-8")
        KnowledgeBase(tmp_path / f"{name}.sqlite3", semantic=False).index([folder])
    return load_settings(
        state_dir=tmp_path / "state",
        providers=["searxng"],
        sources={"docs": {"type": "kb", "path": str(tmp_path / "docs.sqlite3")},
                 "hr": {"type": "kb", "path": str(tmp_path / "hr.sqlite3")}},
        access={"alice": {"key_sha256": hash_key(ALICE), "sources": ["docs"]},
                "boss": {"key_sha256": hash_key(BOSS), "sources": ["docs", "hr"]}},
    )  # fmt: skip


def _clean(text: str) -> None:
    for leak in LEAKS:
        assert leak not in text, f"{leak!r} leaked: {text[:500]}"


def test_grants_are_validated_and_keys_matched_by_hash() -> None:
    good = {"key_sha256": hash_key("k"), "sources": ["kb"]}
    table = grants(Settings(access={"u": good}))
    assert authenticate(table, "k") == table["u"]
    assert authenticate(table, "K") is None
    assert authenticate(table, None) is None
    assert authenticate(table, "") is None
    named = grants(Settings(access={"u": {**good, "user": "Minji@Corp", "groups": ["HR", "hr"]}}))["u"]
    assert named.principals == ("*", "user:minji@corp", "group:hr")  # case-folded, each once
    assert grants(Settings(access={"u": {**good, "user": ["a", "b"]}}))["u"].identities == ("a", "b")
    assert table["u"].principals == ("*",)  # no identity: the public documents only
    for bad in ({"sources": ["kb"]}, {**good, "key_sha256": "abc"}, {**good, "sources": []},
                {**good, "sources": "kb"}, {**good, "extra": 1}, {**good, "user": "a\x1b[2J"},
                {**good, "user": ""}, {**good, "groups": "hr"}, {**good, "groups": [3]}):  # fmt: skip
        with pytest.raises(ConfigError, match=r"\[access\.u\]"):
            grants(Settings(access={"u": bad}))


@given(st.text(max_size=100))
def test_no_other_key_opens_a_grant(key: str) -> None:
    table = {"u": Grant("u", ("kb",), hash_key("the-one-key"))}
    assert (authenticate(table, key) is not None) == (key == "the-one-key")


def test_check_fails_closed_and_names_only_the_grants_sources() -> None:
    settings = Settings(access={"u": {"key_sha256": hash_key("k"), "sources": ["docs"]}},
                        sources={"docs": {"type": "kb"}, "hr": {"type": "kb"}})  # fmt: skip
    with pytest.raises(AccessDenied):
        check(settings, ["docs"], None)
    with bound(grants(settings)["u"]):
        assert check(settings, None, ["kb"]) == ["docs"]
        assert check(settings, ["docs"], None) == ["docs"]
        for asked in (["hr"], ["docs", "hr"], ["code:/etc"], ["nonexistent"]):
            with pytest.raises(InvalidOption) as caught:
                check(settings, asked, None)
            assert str(caught.value) == (
                "a requested source is unknown or not open to this key; it may use docs"
            )  # the same words for a real source and a made-up one


def _post(url: str, path: str, key: str | None, body: dict[str, Any]) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.post(f"{url}{path}", json=body, headers=headers, timeout=60)


def test_http_door_keeps_each_key_to_its_sources(open_tmp: Path) -> None:
    settings = _settings(open_tmp)
    with uvicorn_thread(create_app(settings, DoorSettings(api_key="the-old-single-key"))) as url:
        question = {"question": f"how does the {SECRET} payroll deployment run?"}
        boss = _post(url, "/ask", BOSS, question)
        assert boss.status_code == 200, boss.text
        assert MARK in boss.text  # the control: the secret is there to leak
        for key in (None, "wrong", "the-old-single-key", ALICE + "x", ALICE[:-1]):
            refused = _post(url, "/ask", key, question)
            assert refused.status_code == 401, refused.text
            assert refused.json()["error"]["message"].startswith("missing or wrong API key")
            _clean(refused.text)
            assert "alice" not in refused.text
            assert "docs" not in refused.text
        asked = _post(url, "/ask", ALICE, question)
        assert asked.status_code == 200, asked.text
        _clean(asked.text)
        assert [r["source"] for r in asked.json()["reports"]] == ["docs"]  # no report, no timing of hr
        calls = [
            ("/ask", {**question, "sources": ["hr"]}), ("/ask", {**question, "sources": ["docs", "hr"]}),
            ("/sources/search", {"query": SECRET, "sources": ["hr"]}),
            ("/sources/search", {"query": SECRET, "sources": ["kb:" + str(open_tmp / "hr.sqlite3")]}),
            ("/sources/search", {"query": "passwd", "sources": ["code:/etc"]}),
            ("/retrieve", {"task": f"change the {SECRET} payroll", "sources": ["hr"]}),
        ]  # fmt: skip
        for path, body in calls:
            got = _post(url, path, ALICE, body)
            assert got.status_code == 400, (path, got.text)
            _clean(got.text)
            assert "may use docs" in got.text
        for path, body in (
            ("/sources/search", {"query": SECRET}),
            ("/retrieve", {"task": f"the {SECRET} payroll"}),
        ):
            got = _post(url, path, ALICE, body)  # no sources named: the key's own, not every source
            assert got.status_code == 200, got.text
            _clean(got.text)
        for path in ("/health", "/openapi.json"):
            _clean(httpx.get(f"{url}{path}", timeout=30).text)


def _text(result: Any) -> str:
    return json.dumps(result.structured_content) + " ".join(getattr(c, "text", "") for c in result.content)


async def test_mcp_over_http_keeps_each_key_to_its_sources(open_tmp: Path) -> None:
    settings = _settings(open_tmp)
    with uvicorn_thread(create_http_app(settings, DoorSettings())) as base:
        for key in (None, "wrong"):
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK's own error for a 401 varies
                async with (
                    httpx2.AsyncClient(headers=headers) as h,
                    Client(streamable_http_client(f"{base}/mcp", http_client=h)) as c,
                ):
                    await c.list_tools()
        question = {"question": f"how does the {SECRET} payroll deployment run?"}
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {BOSS}"}, timeout=60) as h,
            Client(streamable_http_client(f"{base}/mcp", http_client=h)) as c,
        ):
            control = await c.call_tool("ask", question)
            assert MARK in _text(control)
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {ALICE}"}, timeout=60) as h,
            Client(streamable_http_client(f"{base}/mcp", http_client=h)) as c,
        ):
            asked = await c.call_tool("ask", question)
            assert not asked.is_error, _text(asked)
            _clean(_text(asked))
            assert [r["source"] for r in asked.structured_content["reports"]] == ["docs"]
            for tool, args in (
                ("ask", {**question, "sources": ["hr"]}),
                ("search_sources", {"query": SECRET, "sources": ["hr"]}),
                ("search_sources", {"query": "passwd", "sources": ["code:/etc"]}),
                ("retrieve", {"task": f"change the {SECRET} payroll", "sources": ["hr"]}),
            ):
                refused = await c.call_tool(tool, args)
                assert refused.is_error, (tool, _text(refused))
                _clean(_text(refused))
                assert "may use docs" in _text(refused)
            found = await c.call_tool("search_sources", {"query": SECRET})
            assert not found.is_error
            _clean(_text(found))


def test_without_access_sections_the_single_key_keeps_its_meaning(open_tmp: Path) -> None:
    settings = _settings(open_tmp).model_copy(update={"access": {}})
    with uvicorn_thread(create_app(settings, DoorSettings(api_key="single"))) as url:
        assert _post(url, "/sources/search", None, {"query": SECRET, "sources": ["hr"]}).status_code == 401
        got = _post(url, "/sources/search", "single", {"query": SECRET, "sources": ["hr"]})
        assert got.status_code == 200, got.text
        assert MARK in got.text


def test_the_web_doors_refuse_a_key_whose_sources_leave_out_the_web(open_tmp: Path) -> None:
    carol = "carol-key-5555555555"
    base = _settings(open_tmp)
    table = {**base.access, "carol": {"key_sha256": hash_key(carol), "sources": ["docs", "web"]}}
    settings = base.model_copy(update={"access": table})
    calls = [("/web/search", {"query": f"{SECRET} payroll"}), ("/web/fetch", {"url": "https://example.org/"})]
    with uvicorn_thread(create_app(settings, DoorSettings())) as url:
        for path, body in calls:
            refused = _post(url, path, ALICE, body)
            assert refused.status_code == 403, refused.text
            assert refused.json()["error"]["type"] == "Forbidden"
            assert refused.json()["error"]["message"] == "this key may not use the web; it may use docs"
            _clean(refused.text)
            assert _post(url, path, "wrong", body).status_code == 401
            # the control: a key that may use the web passes the check (and meets the offline provider)
            assert _post(url, path, carol, body).status_code != 403


async def test_the_mcp_web_tools_refuse_a_key_whose_sources_leave_out_the_web(open_tmp: Path) -> None:
    with uvicorn_thread(create_http_app(_settings(open_tmp), DoorSettings())) as base:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {BOSS}"}, timeout=60) as h,
            Client(streamable_http_client(f"{base}/mcp", http_client=h)) as c,
        ):
            for tool, args in (
                ("web_search", {"query": SECRET}),
                ("web_fetch", {"url": "https://example.org/"}),
            ):
                refused = await c.call_tool(tool, args)
                assert refused.is_error
                assert "Forbidden" in _text(refused)
                assert "may not use the web" in _text(refused)


def test_serve_warns_of_an_open_door_only_when_no_key_guards_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sourcewise.doors.cli.doors import _doors

    monkeypatch.delenv("SOURCEWISE_API_KEY", raising=False)
    _doors("0.0.0.0", Settings())
    assert "without an API key" in capsys.readouterr().err
    _doors("0.0.0.0", Settings(access={"u": {"key_sha256": hash_key("k"), "sources": ["kb"]}}))
    assert "without an API key" not in capsys.readouterr().err


def test_access_add_writes_the_users_names_and_groups_and_the_key_opens_them(tmp_path: Path) -> None:
    from clirun import run_cli

    config = tmp_path / "config.toml"
    ran = run_cli(["access", "add", "minji", "--source", "kb", "--user", "minji@corp", "--group", "hr",
                   "--config", str(config)])  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    key = ran.stdout.strip().splitlines()[-1]
    assert key not in config.read_text()
    grant = authenticate(grants(load_settings(config)), key)
    assert grant is not None
    assert grant.principals == ("*", "user:minji@corp", "group:hr")
    listed = run_cli(["access", "list", "--config", str(config)])
    assert "minji: kb (as minji@corp, group hr)" in listed.stdout
    refused = run_cli(["access", "add", "eve", "-S", "kb", "--user", "a\x1bb", "--config", str(config)])
    assert refused.returncode == 2
    assert "printable" in refused.stderr


@given(st.one_of(st.text(max_size=30), st.lists(st.text(max_size=30), max_size=3), st.integers()))
def test_any_user_value_is_a_config_error_or_clean_principals(value: object) -> None:
    good = {"key_sha256": hash_key("k"), "sources": ["kb"]}
    for key in ("user", "groups"):
        try:
            grant = grants(Settings(access={"u": {**good, key: value}}))["u"]
        except ConfigError as exc:
            said = str(exc)
            grant = None
        if grant is None:
            assert "[access.u]" in said
            continue
        assert grant.principals[0] == "*"
        assert not any(ord(c) < 32 or ord(c) == 127 for p in grant.principals for c in p)
