"""Per-document permissions: a knowledge-base file carries its readers (what the file system lets
read it), stored in the index and applied inside the query on both backends (tantivy, PostgreSQL).
Over a real HTTP door, a key whose user may not read a file never gets it, its name, or a count
that includes it; another key, whose user may, finds the same file: the control that shows the
hidden content is there to leak. Real files with real owners and modes (the tests run as root,
which may chown), real servers on 127.0.0.1."""

from __future__ import annotations

import grp
import json
import os
import pwd
import time
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sourcewise import KnowledgeBase, load_settings
from sourcewise.access import hash_key
from sourcewise.doors.http import create_app
from sourcewise.doors.service import DoorSettings
from sourcewise.sources.readers import FileReaders

from doorkit import uvicorn_thread

ANON, HR, OWNER = "anon-key-0000000000", "hr-key-1111111111", "owner-key-2222222222"
WORD = "zanzibar"  # in every file: each key's hits show which files it may read
PAYROLL, DIARY = "quokka", "axolotl"  # only in the group's file, only in the owner's file


def _someone() -> tuple[str, int, str, int]:
    """A user and a group of this machine other than root (names and ids), for real ownership."""
    user = next(u for u in pwd.getpwall() if u.pw_uid not in (0, os.getuid()))
    group = next(g for g in grp.getgrall() if g.gr_gid not in (0, os.getgid()))
    return user.pw_name, user.pw_uid, group.gr_name, group.gr_gid


def _tree(root: Path) -> tuple[Path, str, str]:
    if os.geteuid() != 0:
        pytest.skip("giving files to another user and group needs root")
    user, uid, group, gid = _someone()
    docs = root / "docs"
    (docs / "hr").mkdir(parents=True)
    (docs / "home").mkdir()
    (docs / "handbook.md").write_text(f"# Handbook\n\nThe {WORD} handbook is for everyone.\n", "utf-8")
    (docs / "hr" / "payroll.md").write_text(f"# Payroll\n\nThe {WORD} payroll runs in {PAYROLL} month.\n")
    (docs / "home" / "diary.md").write_text(f"# Diary\n\nMy {WORD} diary mentions an {DIARY}.\n", "utf-8")
    os.chown(docs / "hr", 0, gid)
    os.chown(docs / "hr" / "payroll.md", 0, gid)
    (docs / "hr").chmod(0o750)  # the group may enter; others may not, whatever the file says
    (docs / "hr" / "payroll.md").chmod(0o644)
    os.chown(docs / "home", uid, -1)
    os.chown(docs / "home" / "diary.md", uid, -1)
    (docs / "home").chmod(0o755)
    (docs / "home" / "diary.md").chmod(0o600)  # its owner alone
    return docs, user, group


def test_file_readers_follow_the_permission_bits_of_the_file_and_every_folder_above(
    open_tmp: Path, tmp_path: Path
) -> None:
    docs, user, group = _tree(open_tmp)
    readers = FileReaders()
    of = {p.name: readers.of(p, p.stat()) for p in docs.rglob("*.md")}
    assert of == {"handbook.md": ("*",), "payroll.md": ("group:" + group, "user:root"),
                  "diary.md": ("user:" + user,)}  # fmt: skip
    (tmp_path / "notes.md").write_text("mine", "utf-8")  # mode 644, in pytest's folder only root may enter
    assert FileReaders().of(tmp_path / "notes.md", (tmp_path / "notes.md").stat()) == ("user:root",)


def _search(url: str, key: str, query: str = WORD) -> dict[str, Any]:
    got = httpx.post(f"{url}/sources/search", json={"query": query, "sources": ["team"]},
                     headers={"Authorization": f"Bearer {key}"}, timeout=60)  # fmt: skip
    assert got.status_code == 200, got.text
    return {"names": sorted(Path(h["path"]).name for h in got.json()[0]["hits"]), "text": got.text}


@pytest.fixture(params=["embedded", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "kb.sqlite3")


def test_each_key_finds_only_the_documents_its_user_may_read(
    location: str, open_tmp: Path, tmp_path: Path
) -> None:
    docs, user, group = _tree(open_tmp)
    with KnowledgeBase(location, semantic=False) as kb:
        kb.index([docs])
        assert len(kb.search(WORD, limit=10)) == 3  # the owner of the machine, no grant: every file
        assert kb.status().restricted == 2  # `index --status` says how many files are not everyone's
    settings = load_settings(
        state_dir=tmp_path / "state", providers=["searxng"],
        sources={"team": {"type": "kb", "path": location}},
        access={"anon": {"key_sha256": hash_key(ANON), "sources": ["team"]},
                "hr": {"key_sha256": hash_key(HR), "sources": ["team"], "groups": [group.upper()]},
                "owner": {"key_sha256": hash_key(OWNER), "sources": ["team"], "user": ["x@corp", user]}},
    )  # fmt: skip
    with uvicorn_thread(create_app(settings, DoorSettings())) as url:
        anon, hr, owner = (_search(url, k) for k in (ANON, HR, OWNER))
        assert anon["names"] == ["handbook.md"]
        assert hr["names"] == ["handbook.md", "payroll.md"]  # the control for the group's file
        assert owner["names"] == ["diary.md", "handbook.md"]  # the control for the owner's file
        for seen, hidden in ((anon, (PAYROLL, DIARY, "payroll", "diary")), (hr, (DIARY, "diary")),
                             (owner, (PAYROLL, "payroll"))):  # fmt: skip
            assert not any(h in seen["text"] for h in hidden), seen["text"][:500]
        # a query only a hidden file answers is an empty result, not a refusal (no oracle either way)
        assert _search(url, ANON, PAYROLL)["names"] == _search(url, OWNER, PAYROLL)["names"] == []
        assert _search(url, HR, PAYROLL)["names"] == ["payroll.md"]
        asked = httpx.post(f"{url}/ask", json={"question": f"when does the {WORD} payroll run?"},
                           headers={"Authorization": f"Bearer {ANON}"}, timeout=60)  # fmt: skip
        assert asked.status_code == 200, asked.text
        assert PAYROLL not in asked.text
        assert "payroll.md" not in asked.text
        page = httpx.get(f"{url}/", headers={"Authorization": f"Bearer {ANON}"}, timeout=60).text
        assert "team" in page
        assert "chunks" not in page
        # A chmod alone (no new content, no new time) reaches the index on the next run.
        (docs / "home" / "diary.md").chmod(0o644)
        with KnowledgeBase(location, semantic=False) as kb:
            report = kb.index([docs])
            assert kb.status().restricted == 1
        assert [Path(p).name for p in report.updated] == ["diary.md"]
        # the server's engine reader reloads on the other writer's commit by a file watch: soon, not at once
        for _ in range(100):
            if (names := _search(url, ANON)["names"]) == ["diary.md", "handbook.md"]:
                break
            time.sleep(0.1)
        assert names == ["diary.md", "handbook.md"]


def _slack(root: Path) -> Path:
    from test_source_slack import USERS, write_export

    users = [{**u, "profile": {**u["profile"], "email": f"{u['name']}@corp"}} for u in USERS]
    days = {
        "engineering/2025-01-15.json": [{"type": "message", "user": "U1", "ts": "1736942400.000100",
                                         "text": f"The {WORD} rollout starts Monday."}],
        "hr-private/2025-01-20.json": [{"type": "message", "user": "U1", "ts": "1737374400.000100",
                                        "text": f"The {WORD} bonus is a {PAYROLL} secret."}],
        "D9/2025-01-21.json": [{"type": "message", "user": "U2", "ts": "1737460800.000100",
                                "text": f"Between us: the {WORD} {DIARY} plan."}],
        "unlisted/2025-01-22.json": [{"type": "message", "user": "U3", "ts": "1737547200.000100",
                                      "text": f"An unlisted {WORD} folder."}],
    }  # fmt: skip
    export = write_export(root / "slack", days)
    (export / "users.json").write_text(json.dumps(users), "utf-8")
    (export / "groups.json").write_text(json.dumps([{"id": "G1", "name": "hr-private", "members": ["U1"]}]))
    (export / "dms.json").write_text(json.dumps([{"id": "D9", "members": ["U2", "U3"]}]), "utf-8")
    return export


def test_a_slack_key_finds_only_the_conversations_its_user_is_in(tmp_path: Path) -> None:
    export = _slack(tmp_path)
    settings = load_settings(
        state_dir=tmp_path / "state", providers=["searxng"], sources={"chat": {"type": "slack", "path": str(export)}},
        access={"anon": {"key_sha256": hash_key(ANON), "sources": ["chat"]},
                "sarah": {"key_sha256": hash_key(HR), "sources": ["chat"], "user": "SARAH@corp"},
                "bob": {"key_sha256": hash_key(OWNER), "sources": ["chat"], "user": "U3"}},
    )  # fmt: skip

    def found(url: str, key: str, query: str) -> str:
        got = httpx.post(f"{url}/sources/search", json={"query": query, "sources": ["chat"]},
                         headers={"Authorization": f"Bearer {key}"}, timeout=60)  # fmt: skip
        assert got.status_code == 200, got.text
        return " ".join(sorted(h["meta"]["channel"] for h in got.json()[0]["hits"]))

    with uvicorn_thread(create_app(settings, DoorSettings())) as url:
        for query in (WORD, "after:2025-01-01"):  # ranked by the index; and a query of filters only
            assert found(url, ANON, query) == "engineering"  # public channels only; never an unlisted one
            assert found(url, HR, query) == "engineering hr-private"  # the control for the private channel
            assert found(url, OWNER, query) == "D9 engineering"  # the control for the direct message
        assert found(url, ANON, PAYROLL) == found(url, OWNER, PAYROLL) == ""
        assert found(url, ANON, "in:hr-private") == ""
        page = httpx.get(f"{url}/", headers={"Authorization": f"Bearer {ANON}"}, timeout=60).text
        assert "messages" not in page  # no count that includes the hidden ones


def test_a_mailbox_with_an_owner_is_found_by_its_owner_alone(tmp_path: Path) -> None:
    import mailbox

    from test_source_mail import mail

    path = tmp_path / "minji.mbox"
    box = mailbox.mbox(path)
    box.add(mail({"From": "hr@corp", "To": "minji@corp", "Subject": f"Your {WORD} offer",
                  "Date": "Wed, 15 Jan 2025 09:00:00 +0000", "Message-ID": "<o1@corp>"},
                 f"The {WORD} offer includes a {PAYROLL} bonus.\r\n"))  # fmt: skip
    box.flush()
    box.close()
    settings = load_settings(
        state_dir=tmp_path / "state", providers=["searxng"],
        sources={"inbox": {"type": "mail", "path": str(path), "owner": "Minji@corp"}},
        access={"anon": {"key_sha256": hash_key(ANON), "sources": ["inbox"]},
                "minji": {"key_sha256": hash_key(OWNER), "sources": ["inbox"], "user": "minji@corp"}},
    )  # fmt: skip
    with uvicorn_thread(create_app(settings, DoorSettings())) as url:
        for query in (WORD, "from:hr@corp"):
            got = {key: httpx.post(f"{url}/sources/search", json={"query": query, "sources": ["inbox"]},
                                   headers={"Authorization": f"Bearer {key}"}, timeout=60)
                   for key in (ANON, OWNER)}  # fmt: skip
            assert [len(g.json()[0]["hits"]) for g in got.values()] == [0, 1]  # the owner: the control
            assert PAYROLL not in got[ANON].text
            assert "offer" not in got[ANON].text


def test_an_embedded_index_of_schema_2_is_rebuilt_with_its_readers(open_tmp: Path, tmp_path: Path) -> None:
    """Schema 2 held no readers (its engine has no field for them): opening it rebuilds it from
    its files, so no file stays readable by everyone for want of a field."""
    import sqlite3

    docs, user, _ = _tree(open_tmp)
    location = tmp_path / "kb.sqlite3"
    with KnowledgeBase(location, semantic=False) as kb:
        kb.index([docs])
    with sqlite3.connect(location) as db:
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    with KnowledgeBase(location, semantic=False) as kb:
        assert sorted(Path(h.path or "").name for h in kb.search(WORD, readers=["*"])) == ["handbook.md"]
        mine = kb.search(WORD, readers=["*", f"user:{user}"])
        assert sorted(Path(h.path or "").name for h in mine) == ["diary.md", "handbook.md"]


PRINCIPALS = ["*", "user:ana", "user:bo", "group:hr", "group:ops"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.lists(st.sampled_from(PRINCIPALS), max_size=3, unique=True), min_size=4, max_size=4),
    st.lists(st.sampled_from(PRINCIPALS[1:]), max_size=3, unique=True),
)
def test_the_filter_keeps_a_document_exactly_when_a_principal_is_among_its_readers(
    location: str, docs_readers: list[list[str]], mine: list[str]
) -> None:
    """Any readers on four documents, any user: the query finds exactly the documents one of the
    user's principals (and ``*``, which every user has) may read, on both backends."""
    from sourcewise.sources.kb.query import embedded
    from sourcewise.sources.kb.rows import ChunkRow, FileRow

    with KnowledgeBase(location, semantic=False) as kb:
        writer = kb.store.writer()
        for i, readers in enumerate(docs_readers):
            row = FileRow(
                f"/d/{i}.md", f"h{i}", 1, 10, f"Doc {i}", "2025-01-01", "md", readers=tuple(readers)
            )
            text = f"The {WORD} note number {i}."
            chunk = ChunkRow(0, text, (), 1, 1, f"{i:032x}", len(embedded(f"Doc {i}", (), text)))
            writer.put_file(row, [chunk], known=True)
        writer.finish()
        user = ("*", *mine)
        found = sorted(h.path or "" for h in kb.search(WORD, limit=10, readers=user))
        assert found == [f"/d/{i}.md" for i, r in enumerate(docs_readers) if set(r) & set(user)]
        assert len(kb.search(WORD, limit=10)) == 4  # no user bound: every document


async def test_mcp_over_http_keeps_each_user_to_the_files_they_may_read(
    open_tmp: Path, tmp_path: Path
) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from sourcewise.doors.mcp import create_http_app

    docs, _, group = _tree(open_tmp)
    with KnowledgeBase(tmp_path / "kb.sqlite3", semantic=False) as kb:
        kb.index([docs])
    settings = load_settings(
        state_dir=tmp_path / "state", providers=["searxng"],
        sources={"team": {"type": "kb", "path": str(tmp_path / "kb.sqlite3")}},
        access={"anon": {"key_sha256": hash_key(ANON), "sources": ["team"]},
                "hr": {"key_sha256": hash_key(HR), "sources": ["team"], "groups": [group]}},
    )  # fmt: skip
    with uvicorn_thread(create_http_app(settings, DoorSettings())) as base:
        seen = {}
        for key in (ANON, HR):
            async with (
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as h,
                Client(streamable_http_client(f"{base}/mcp", http_client=h)) as c,
            ):
                got = await c.call_tool("search_sources", {"query": WORD})
                assert not got.is_error
                seen[key] = json.dumps(got.structured_content) + " ".join(
                    getattr(x, "text", "") for x in got.content
                )
        assert "payroll.md" not in seen[ANON]
        assert PAYROLL not in seen[ANON]
        assert "payroll.md" in seen[HR]  # the control: the group's key finds it through the same door


def _issue(number: int, repo: str, private: bool, body: str) -> dict[str, Any]:
    """One item as GitHub's cross-repository lists (``GET /issues``, ``/orgs/ORG/issues``) give it:
    with its ``repository``, whose ``private`` says who may see it on GitHub."""
    return {"html_url": f"https://github.com/acme/{repo}/issues/{number}", "number": number,
            "title": f"{WORD} {repo} issue", "body": body, "state": "open", "user": {"login": "kim"},
            "created_at": "2025-01-05T09:00:00Z", "updated_at": "2025-01-20T09:00:00Z",
            "repository": {"full_name": f"acme/{repo}", "private": private}}  # fmt: skip


def test_a_github_export_is_found_by_its_readers_alone_and_a_private_one_by_nobody_unnamed(
    tmp_path: Path,
) -> None:
    """``readers`` on a github source: the named user and the named group find every issue; another
    key nothing, not even a count. An export whose issues say their repository is private, with no
    ``readers``, keeps them from every key (it does not become public), but not its public ones."""
    private = tmp_path / "private.json"
    private.write_text(json.dumps([_issue(1, "vault", True, f"The {PAYROLL} key rotates.")]), "utf-8")
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps([_issue(2, "site", False, "Public docs."),
                                 _issue(3, "vault", True, f"The {DIARY} escrow.")]), "utf-8")  # fmt: skip
    settings = load_settings(
        state_dir=tmp_path / "state", providers=["searxng"],
        sources={"vault": {"type": "github", "path": str(private), "readers": ["Minji@corp", "group:Eng"]},
                 "mixed": {"type": "github", "path": str(mixed)}},
        access={"anon": {"key_sha256": hash_key(ANON), "sources": ["vault", "mixed"]},
                "eng": {"key_sha256": hash_key(HR), "sources": ["vault", "mixed"], "groups": ["eng"]},
                "minji": {"key_sha256": hash_key(OWNER), "sources": ["vault", "mixed"], "user": "minji@corp"}},
    )  # fmt: skip

    def found(url: str, key: str, source: str, query: str) -> tuple[list[str], str]:
        got = httpx.post(f"{url}/sources/search", json={"query": query, "sources": [source]},
                         headers={"Authorization": f"Bearer {key}"}, timeout=60)  # fmt: skip
        assert got.status_code == 200, got.text
        result = got.json()[0]
        shown = json.dumps([result["hits"], result["warnings"]])  # not the query, which echoes the word
        return sorted(h["meta"]["number"] for h in result["hits"]), shown

    with uvicorn_thread(create_app(settings, DoorSettings())) as url:
        for query in (WORD, "is:open"):  # ranked by the index; and a query of filters only
            assert found(url, ANON, "vault", query)[0] == []
            assert found(url, OWNER, "vault", query)[0] == ["1"]  # the controls: the user, the group
            assert found(url, HR, "vault", query)[0] == ["1"]
            for key in (ANON, HR, OWNER):  # private, no readers: nobody over the door; the public one: all
                assert found(url, key, "mixed", query)[0] == ["2"]
        for query in (PAYROLL, DIARY, "vault"):
            hits, text = found(url, ANON, "vault" if query == PAYROLL else "mixed", query)
            assert hits == []
            assert PAYROLL not in text
            assert DIARY not in text
        pages = {k: httpx.get(f"{url}/", headers={"Authorization": f"Bearer {k}"}, timeout=60).text
                 for k in (ANON, OWNER)}  # fmt: skip
        assert "vault (project tracker): ready - 0 issues" in pages[ANON]  # counts of what each may read
        assert "vault (project tracker): ready - 1 issues" in pages[OWNER]
        assert "mixed (project tracker): ready - 1 issues" in pages[OWNER]  # the private one: nobody's
        assert "private" not in pages[ANON] + pages[OWNER]  # the note on hidden issues is the CLI's only
