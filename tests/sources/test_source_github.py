"""The GitHub issues source over REST-shaped and ``gh issue list --json`` exports written by the test."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sourcewise.config import Settings
from sourcewise.errors import SourceFormatError, SourceUnavailable, SourcewiseError
from sourcewise.models import SourceQuery
from sourcewise.planning.routing import plan
from sourcewise.sources.tracker.github import GitHubOptions, GitHubSource
from sourcewise.sources.tracker.issues import date_range, parse_export


def _gh(number: int, title: str, **kw: Any) -> dict[str, Any]:
    """One item as ``gh issue list --json number,title,body,author,...,url`` writes it."""
    return {
        "number": number,
        "title": title,
        "body": kw.get("body", ""),
        "author": {"login": kw.get("author", "sarah"), "id": "U_1", "is_bot": False, "name": ""},
        "assignees": [{"login": a, "id": "U", "name": ""} for a in kw.get("assignees", [])],
        "labels": [{"id": "L", "name": n, "description": "", "color": "fff"} for n in kw.get("labels", [])],
        "milestone": {"number": 1, "title": kw["milestone"], "description": "", "dueOn": None}
        if kw.get("milestone")
        else None,
        "state": kw.get("state", "OPEN"),
        "createdAt": kw.get("created", "2025-01-05T09:00:00Z"),
        "updatedAt": kw.get("updated", "2025-01-20T09:00:00Z"),
        "closedAt": kw.get("closed"),
        "url": f"https://github.com/acme/api/{'pull' if kw.get('pr') else 'issues'}/{number}",
    }


GH = [
    _gh(1, "API migration timeline", body="Move clients to the v2 API by March.", assignees=["kim"],
        labels=["backend", "planning"], milestone="Q1 launch", updated="2025-02-01T10:00:00Z"),
    _gh(2, "Login fails after tokenExpiry", body="Users are logged out early.", author="kim",
        labels=["bug"], state="CLOSED", closed="2025-01-02T00:00:00Z", updated="2025-01-02T00:00:00Z",
        created="2024-12-20T00:00:00Z"),
    _gh(3, "Dark mode for the API console", body="A migration of the theme code.", assignees=["lee"],
        labels=["ui", "bug"], pr=True, updated="2025-01-15T12:00:00Z"),
]  # fmt: skip


def _rest(number: int, title: str, **kw: Any) -> dict[str, Any]:
    """One item as ``GET /repos/O/R/issues`` returns it (abridged to the fields read, plus noise)."""
    item: dict[str, Any] = {
        "url": f"https://api.github.com/repos/acme/api/issues/{number}",
        "html_url": f"https://github.com/acme/api/issues/{number}",
        "id": 1000 + number,
        "number": number,
        "title": title,
        "user": {"login": kw.get("author", "sarah"), "id": 7, "type": "User"},
        "labels": [{"id": 1, "name": n, "color": "fff", "default": False} for n in kw.get("labels", [])],
        "state": kw.get("state", "open"),
        "locked": False,
        "assignee": {"login": kw["assignees"][0]} if kw.get("assignees") else None,
        "assignees": [{"login": a} for a in kw.get("assignees", [])],
        "milestone": {"title": kw["milestone"], "number": 3, "state": "open"}
        if kw.get("milestone")
        else None,
        "comments": 2,
        "created_at": kw.get("created", "2025-01-05T09:00:00Z"),
        "updated_at": kw.get("updated", "2025-01-20T09:00:00Z"),
        "closed_at": kw.get("closed"),
        "author_association": "MEMBER",
        "body": kw.get("body"),
        "state_reason": None,
    }
    if kw.get("pr"):
        item["pull_request"] = {"url": "https://api.github.com/repos/acme/api/pulls/9", "merged_at": None}
    return item


REST = [
    _rest(7, "Rate limiting for the API", body="Throttle per key.", assignees=["kim"], labels=["backend"],
          milestone="Q1 launch", updated="2025-02-03T00:00:00Z"),
    _rest(8, "Bump httpx", body=None, author="dependabot[bot]", pr=True, state="closed",
          closed="2025-01-03T00:00:00Z", updated="2025-01-03T00:00:00Z"),
]  # fmt: skip


@pytest.fixture
def gh_file(tmp_path: Path) -> Path:
    path = tmp_path / "issues.json"
    path.write_text(json.dumps(GH, indent=1))
    return path


@pytest.fixture
def rest_file(tmp_path: Path) -> Path:
    path = tmp_path / "rest.json"
    path.write_text(json.dumps(REST))
    return path


def _source(path: Path, **options: Any) -> GitHubSource:
    return GitHubSource("gh", GitHubOptions(path=path, **options), Settings())


async def _numbers(source: GitHubSource, query: str, **params: Any) -> tuple[list[int], tuple[str, ...]]:
    q = SourceQuery(source="project_tracker", mode="keyword", query=query, params=params)
    result = await source.search(q, limit=50)
    return [int(h.meta["number"]) for h in result.hits], result.warnings


async def test_gh_export_is_searched_and_hits_cite_the_issue(gh_file: Path) -> None:
    source = _source(gh_file, me="kim")
    result = await source.search(SourceQuery(source="project_tracker", mode="keyword", query="API migration"))
    assert [h.meta["number"] for h in result.hits][:1] == ["1"]
    hit = result.hits[0]
    assert hit.location == "https://github.com/acme/api/issues/1"
    assert hit.title == "#1 API migration timeline"
    assert hit.author == "sarah"
    assert hit.kind == "project_tracker"
    assert hit.authority == "tracker_task"
    assert hit.timestamp is not None
    assert hit.meta["milestone"] == "Q1 launch"
    assert hit.text.startswith("Move clients")
    assert (await _numbers(source, "token expiry"))[0] == [2]  # identifier split in the title


async def test_rest_export_reads_users_pull_requests_and_null_bodies(rest_file: Path) -> None:
    source = _source(rest_file)
    assert (await _numbers(source, "rate limiting"))[0] == [7]
    assert (await _numbers(source, "is:pr"))[0] == [8]
    assert (await _numbers(source, "author:dependabot[bot]"))[0] == [8]
    assert (await _numbers(source, 'assignee:kim milestone:"Q1 launch"'))[0] == [7]


@pytest.mark.parametrize(
    ("query", "params", "expected"),
    [
        ("API is:open", {}, [1, 3]),
        ("API is:closed", {}, []),
        ("is:closed", {}, [2]),
        ("state:open", {}, [1, 3]),
        ("is:issue", {}, [1, 2]),
        ("is:pr", {}, [3]),
        ("type:pr", {}, [3]),
        ("assignee:me", {}, [1]),
        ("assignee:lee", {}, [3]),
        ("author:kim", {}, [2]),
        ("author:@sarah", {}, [1, 3]),
        ("label:bug", {}, [3, 2]),
        ("label:bug label:ui", {}, [3]),
        ("label:ui,planning", {}, [1, 3]),
        ("label:bug -label:ui", {}, [2]),
        ('milestone:"q1 launch"', {}, [1]),
        ("updated:>=2025-01-15", {}, [1, 3]),
        ("updated:<2025-01-15", {}, [2]),
        ("updated:2025-01-15", {}, [3]),
        ("updated:2025-01-01..2025-01-15", {}, [3, 2]),
        ("created:<2025-01-01", {}, [2]),
        ("after:2025-01-16", {}, [1]),
        ("before:2025-01-16", {}, [3, 2]),
        ("API -console", {}, [1]),
        ('"API console"', {}, [3]),
        ("", {"assignee_any": "me"}, [1]),
        ("", {"assignee_any": ["lee", "kim"]}, [1, 3]),
        ("", {"created_by_any": "kim"}, [2]),
        ("", {"modified_on_after": "2025-01-16"}, [1]),
        ("", {"modified_on_before": "2025-01-16"}, [3, 2]),
        ("", {"resource_subtype": "milestone"}, [1]),
        ("", {"completed": True}, [2]),
        ("", {"completed": False}, [1, 3]),
        ("completed:false", {}, [1, 3]),
        ("resource_subtype:milestone", {}, [1]),
        ("assignee_any:kim", {}, [1]),
    ],
)
async def test_every_filter_keeps_and_excludes(
    gh_file: Path, query: str, params: dict[str, Any], expected: list[int]
) -> None:
    numbers, warnings = await _numbers(_source(gh_file, me="kim"), query, **params)
    if query.startswith(("API ", '"')):
        assert sorted(numbers) == sorted(expected)
    else:
        assert numbers == expected  # filter-only queries list the most recently updated first
    assert warnings == ()


async def test_the_planners_tracker_query_runs_as_written(gh_file: Path) -> None:
    source = _source(gh_file, me="kim")
    p = plan("What is the status of my API migration tasks?", sources=["project_tracker"])
    query = source.query_for(p)[0]
    assert query.params.get("assignee_any") == "me"
    result = await source.search(query)
    assert [h.meta["number"] for h in result.hits] == ["1"]
    assert result.warnings == ()


async def test_filters_it_cannot_honour_are_said(gh_file: Path) -> None:
    source = _source(gh_file)  # no `me` configured
    numbers, warnings = await _numbers(source, "API in:#eng is:thread assignee:me after:2025-13-40")
    assert sorted(numbers) == [1, 3]
    joined = " | ".join(warnings)
    for expected in ("in:#eng", "is:thread", "assignee:me needs the `me` option", "after:2025-13-40"):
        assert expected in joined
    _, warnings = await _numbers(source, "", resource_subtype="epic", colour="red")
    assert any("resource_subtype:epic" in w for w in warnings)
    assert any("'colour'" in w for w in warnings)


async def test_a_filter_on_a_field_the_export_lacks_is_said(tmp_path: Path) -> None:
    path = tmp_path / "slim.json"
    path.write_text(
        json.dumps(
            [{"number": 1, "title": "Slim", "url": "https://github.com/a/b/issues/1", "state": "OPEN"}]
        )
    )
    numbers, warnings = await _numbers(_source(path), "label:bug")
    assert numbers == []
    assert any("no field for label:bug" in w for w in warnings)
    assert (await _numbers(_source(path), "slim"))[0] == [1]


async def test_a_folder_of_rest_pages_is_one_export_and_changes_are_reread(tmp_path: Path) -> None:
    (tmp_path / "page1.json").write_text(json.dumps(REST[:1]))
    (tmp_path / "page2.json").write_text(json.dumps({"total_count": 1, "items": REST[1:]}))
    source = _source(tmp_path)
    assert sorted((await _numbers(source, ""))[0]) == [7, 8]
    info = await source.info()
    assert info.items == 2
    assert info.detail == "1 issues, 1 pull requests, 1 open"
    assert info.updated is not None
    assert info.updated.isoformat().startswith("2025-02-03")
    (tmp_path / "page2.json").write_text(json.dumps([*REST[1:], _rest(9, "Wombat support")]))
    assert (await _numbers(source, "wombat"))[0] == [9]
    await source.aclose()


async def test_missing_and_empty_paths(tmp_path: Path) -> None:
    with pytest.raises(SourceUnavailable, match="does not exist"):
        await _numbers(_source(tmp_path / "none.json"), "x")
    with pytest.raises(SourceUnavailable, match=r"no \.json"):
        await _numbers(_source(tmp_path), "x")
    info = await _source(tmp_path / "none.json").info()
    assert not info.ready


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"issues": []}, "expected a JSON list of issues"),
        ("just text", "got a JSON str"),
        ([1, 2], "item 0 is a int"),
        ([{"foo": 1}], "neither a REST API issue"),
        (
            [{"number": 1, "title": 5, "url": "https://github.com/a/b/issues/1", "state": "OPEN"}],
            "field 'title'",
        ),
        (
            [{"number": "x", "title": "t", "html_url": "https://github.com/a/b/issues/1", "state": "open"}],
            "'number'",
        ),
        ([{"number": 1, "title": "t", "url": "javascript:alert(1)", "state": "OPEN"}], "not an http"),
        (
            [{"number": 1, "title": "t", "url": "https://github.com/a/b/issues/1", "state": "WEIRD"}],
            "neither open nor closed",
        ),
        (
            [
                {
                    "number": 1,
                    "title": "t",
                    "html_url": "https://github.com/a/b/issues/1",
                    "state": "open",
                    "user": "bob",
                }
            ],
            "'user'",
        ),
        (
            [
                {
                    "number": 1,
                    "title": "t",
                    "url": "https://github.com/a/b/issues/1",
                    "state": "OPEN",
                    "labels": [3],
                }
            ],
            "labels",
        ),
        (
            [
                {
                    "number": 1,
                    "title": "t",
                    "url": "https://github.com/a/b/issues/1",
                    "state": "OPEN",
                    "updatedAt": "soon",
                }
            ],
            "updatedAt",
        ),
    ],
)
async def test_exports_of_the_wrong_shape_are_format_errors(tmp_path: Path, data: Any, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SourceFormatError, match=message):
        await _numbers(_source(path), "x")


async def test_invalid_json_and_oversized_files(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b'[{"number": 1,')
    with pytest.raises(SourceFormatError, match="not valid JSON"):
        await _numbers(_source(path), "x")
    path.write_bytes(b"\xff\xfe[]")
    with pytest.raises(SourceFormatError, match="not valid JSON"):
        await _numbers(_source(path), "x")
    path.write_text(json.dumps(GH))
    with pytest.raises(SourceFormatError, match="larger than"):
        await _numbers(_source(path, max_bytes=100), "x")
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SourceFormatError):
        await _numbers(_source(path), "x")


def test_user_info_is_dropped_and_control_characters_stripped() -> None:
    item = _gh(4, "Evil \x1b[31mtitle\u202e", body="body \x07bell")
    item["url"] = "https://user:secret@github.com/acme/api/issues/4"
    issues, _ = parse_export([item], "t")
    assert issues[0].url == "https://github.com/acme/api/issues/4"
    from sourcewise.sources.tracker.github import hit_from_issue

    hit = hit_from_issue(issues[0], 1.0, "gh")
    assert "\x1b" not in hit.title
    assert "\u202e" not in hit.title
    assert "\x07" not in hit.text


def test_date_ranges() -> None:
    lo, hi = date_range("2025-01-01..*")
    assert lo is not None
    assert hi is None
    lo, hi = date_range("<=2025-01-31")
    assert lo is None
    assert hi is not None
    assert hi.day == 1


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(list(GH[0])), inner, max_size=8)
    ),
    max_leaves=30,
)


@settings(deadline=None)
@given(data=_json)
def test_any_json_is_issues_or_a_format_error(data: object) -> None:
    try:
        issues, _ = parse_export(data, "t")
    except SourceFormatError:
        return
    assert all(i.url.startswith("http") for i in issues)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=st.text(max_size=200),
    params=st.dictionaries(
        st.sampled_from(["text", "assignee_any", "completed", "modified_on_after", "resource_subtype", "x"]),
        st.text(max_size=12) | st.booleans() | st.lists(st.text(max_size=5), max_size=3),
        max_size=3,
    ),
)
async def test_any_query_gives_hits_or_a_sourcewise_error(
    gh_file: Path, query: str, params: dict[str, Any]
) -> None:
    with contextlib.suppress(SourcewiseError):
        await _numbers(_source(gh_file, me="kim"), query, **params)


def _in_repo(item: dict[str, Any], private: bool) -> dict[str, Any]:
    return {**item, "repository": {"full_name": "acme/api", "private": private}}


async def test_readers_are_applied_inside_the_query_and_a_private_export_is_nobodys_without_them(
    tmp_path: Path,
) -> None:
    """No grant (the CLI, the library): every issue. A grant: the issues its principals may read,
    for ranked and filter-only queries, ``issues()`` and the counts of ``info()``."""
    from sourcewise.access import Grant, bound

    path = tmp_path / "rest.json"
    path.write_text(json.dumps([_in_repo(REST[0], True), _in_repo(REST[1], False)]))
    kim = Grant("kim", ("gh",), identities=("KIM",))
    nobody = Grant("anon", ("gh",))
    plain = _source(path)
    assert sorted((await _numbers(plain, "rate OR httpx"))[0]) == [7, 8]
    assert "1 from private repositories hidden over the doors" in (await plain.info()).detail
    with bound(kim):  # private and no readers: not even a named user over a door
        assert sorted((await _numbers(plain, "rate OR httpx"))[0]) == [8]
        assert (await _numbers(plain, "is:open"))[0] == []
        assert [x.number for x in await plain.issues()] == [8]
        info = await plain.info()
        assert info.items == 1
        assert "private" not in info.detail
    named = _source(path, readers=["kim", "group:Ops"])
    for grant, seen in ((kim, [7, 8]), (Grant("o", ("gh",), groups=("ops",)), [7, 8]), (nobody, [])):
        with bound(grant):
            assert sorted((await _numbers(named, "rate OR httpx"))[0]) == seen
            assert (await _numbers(named, "updated:>2025-01-01"))[0] == seen  # newest first
            assert (await named.info()).items == len(seen)
    assert sorted((await _numbers(named, "rate OR httpx"))[0]) == [7, 8]
    public = _source(path, readers="*")  # said on purpose: everyone the source is open to
    with bound(nobody):
        assert sorted((await _numbers(public, "rate OR httpx"))[0]) == [7, 8]
    for source in (plain, named, public):
        await source.aclose()


def test_configured_readers_are_principals() -> None:
    from sourcewise.access import named

    assert named(["Kim@Corp", "group:Ops", "USER:lee", "*", "kim@corp"]) == (
        "user:kim@corp", "group:ops", "user:lee", "*"
    )  # fmt: skip
    issues, _ = parse_export([_in_repo(REST[0], True), REST[1]], "gh")
    assert [x.private for x in issues] == [True, False]
    with pytest.raises(SourceFormatError, match="repository"):
        parse_export([{**REST[0], "repository": "acme/api"}], "gh")


@settings(deadline=None)
@given(
    st.text(min_size=1, max_size=40).filter(lambda n: n.partition(":")[0].casefold() not in ("user", "group"))
)
def test_a_configured_reader_is_found_by_the_user_who_carries_that_name(name: str) -> None:
    from sourcewise.access import PUBLIC, Grant, named

    mine = Grant("x", ("gh",), identities=(name,)).principals
    assert set(named([name])) & set(mine)  # configured and carried alike: the same principal
    others = Grant("y", ("gh",), identities=(name + "x",)).principals
    assert name == PUBLIC or not set(named([name])) & set(others)
