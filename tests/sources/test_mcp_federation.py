"""Real MCP servers as sources: sourcewise's own (``sourcewise mcp`` over stdio and ``--http``) as a
source of another sourcewise, keeping the remote's tiers, authority and locations; the reference
memory server from npm (skipped when it is not installed); ``ask`` over a knowledge base plus two
MCP sources through the CLI, and ``sources add-mcp`` against a real server (over stdio and by URL)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from sourcewise import Session, load_settings
from sourcewise.doors.cli.mcp import section_toml
from sourcewise.doors.mcp import create_http_app
from sourcewise.loops.ask import aask
from sourcewise.sources.api import asearch_sources
from sourcewise.sources.kb.source import KnowledgeBase

from clirun import run_cli
from doorkit import free_port, provider_env, spawn, uvicorn_thread
from servers import LocalServer, Reply, Seen

CHAT = Path(__file__).parent.parent / "mcp_chat_server.py"
QUESTION = "What did we decide about the API migration?"
REMOTE_DOCS = {
    "migration.md": "# API migration\n\nThe architecture board decided that the API migration to v2 "
    "finishes in March; the v1 API stays read-only until April.\n",
    "lunch.md": "# Lunch\n\nPizza on Fridays.\n",
}
LOCAL_DOCS = {
    "plan.md": "# Billing plan\n\nWe decided the API migration of billing clients happens per region, "
    "Europe first.\n",
}


def kb_at(folder: Path, docs: dict[str, str]) -> Path:
    """A keyword-only knowledge base of ``docs`` in ``folder``; the index file."""
    (folder / "docs").mkdir(parents=True)
    for name, text in docs.items():
        (folder / "docs" / name).write_text(text, "utf-8")
    index = folder / "kb.sqlite3"
    with KnowledgeBase(index, semantic=False) as kb:
        kb.index([folder / "docs"])
    return index


@pytest.fixture
def remote(tmp_path: Path, server: LocalServer) -> dict[str, str]:
    """Another team's sourcewise: a knowledge base and the web (a local SearXNG); its environment."""
    index = kb_at(tmp_path / "remote", REMOTE_DOCS)
    config = tmp_path / "remote" / "config.toml"
    config.write_text(section_toml("kb", {"type": "kb", "path": str(index), "semantic": False}), "utf-8")
    env = provider_env(
        server, tmp_path / "remote" / "state", SOURCEWISE_CONFIG=str(config), HF_HUB_OFFLINE="1"
    )
    return env


def federated(remote_env: dict[str, str], **server: Any) -> dict[str, Any]:
    """``[sources.remote]``: the sourcewise preset, asking the remote's knowledge base and web."""
    passed = (
        "SOURCEWISE_CONFIG",
        "SOURCEWISE_STATE_DIR",
        "SEARXNG_URL",
        "SOURCEWISE_PROVIDERS",
        "HF_HUB_OFFLINE",
    )
    env = {k: remote_env[k] for k in passed} | {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    stdio = {"command": [sys.executable, "-m", "sourcewise", "mcp"], "env": env}
    return {"type": "mcp", "preset": "sourcewise", **(server or stdio),
            "arguments": {"query": "{query}", "limit": "{limit}", "sources": ["kb", "web"]}}  # fmt: skip


async def expected(remote_env: dict[str, str], query: str) -> dict[str, tuple[Any, ...]]:
    """What the remote itself finds for ``query``: location -> (tier, authority, source)."""
    settings = load_settings(
        config=remote_env["SOURCEWISE_CONFIG"],
        state_dir=Path(remote_env["SOURCEWISE_STATE_DIR"]),
        provider_options={"searxng": {"url": remote_env["SEARXNG_URL"]}},
        providers=["searxng"],
    )
    async with Session(settings) as session:
        results = await asearch_sources(query, ["kb", "web"], session=session, limit=10)
    return {h.location: (h.tier, h.authority, r.source) for r in results for h in r.hits}


async def check_federation(tmp_path: Path, remote_env: dict[str, str], section: dict[str, Any]) -> None:
    settings = load_settings(
        state_dir=tmp_path / "local", source_timeout=90, providers=[], sources={"remote": section}
    )
    async with Session(settings) as session:
        answer = await aask(QUESTION, sources=["remote"], session=session)
        info = await session.source("remote").info()
        sent = answer.reports[0].queries[0]
    assert answer.reports[0].status == "ok", answer.reports
    assert info.ready
    assert "search_sources" in info.detail
    theirs = await expected(remote_env, sent)
    assert theirs, "the remote finds something for the query sent"
    mine = {h.hit.location: h.hit for h in answer.hits}
    assert set(mine) & set(theirs), (mine, theirs)
    for location in set(mine) & set(theirs):
        hit = mine[location]
        assert (hit.tier, hit.authority, hit.meta["remote_source"]) == theirs[location]
        assert hit.source == "remote"
    assert any(h.tier == 1 for h in mine.values()), "the remote's web results keep their tiers"
    assert any(h.meta["remote_source"] == "kb" for h in mine.values())


async def test_sourcewise_over_stdio_is_a_source_of_another(tmp_path: Path, remote: dict[str, str]) -> None:
    await check_federation(tmp_path, remote, federated(remote))


async def test_sourcewise_over_http_is_a_source_of_another(
    tmp_path: Path, remote: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    monkeypatch.setenv("REMOTE_KEY", "k-fed-1")
    env = {**remote, "SOURCEWISE_API_KEY": "k-fed-1"}
    url = f"http://127.0.0.1:{port}/mcp"
    with spawn(["mcp", "--http", "--port", str(port)], env, url):
        section = federated(remote, url=url, headers={"Authorization": "Bearer ${REMOTE_KEY}"})
        await check_federation(tmp_path, remote, section)
        monkeypatch.setenv("REMOTE_KEY", "wrong")
        settings = load_settings(
            state_dir=tmp_path / "l2", source_timeout=60, providers=[], sources={"remote": section}
        )
        async with Session(settings) as session:
            refused = await aask(QUESTION, sources=["remote"], session=session)
    assert refused.reports[0].status == "unavailable"


def memory_server() -> str:
    found = shutil.which("mcp-server-memory")
    if found is None or shutil.which("node") is None:
        pytest.skip("@modelcontextprotocol/server-memory is not installed (npm install -g, as .ci/run does)")
    return found


async def test_the_npm_memory_server_answers_an_ask(tmp_path: Path) -> None:
    graph = tmp_path / "memory.jsonl"
    entities = [
        {"type": "entity", "name": "Kestrel", "entityType": "project",
         "observations": ["Kestrel is the billing service", "Kestrel is owned by the payments team"]},
        {"type": "entity", "name": "Lunch", "entityType": "event", "observations": ["Pizza on Fridays"]},
    ]  # fmt: skip
    graph.write_text("\n".join(json.dumps(e) for e in entities), "utf-8")
    section = {
        "type": "mcp",
        "preset": "memory",
        "command": [memory_server()],
        "env": {"MEMORY_FILE_PATH": str(graph)},
    }
    settings = load_settings(
        state_dir=tmp_path / "s", source_timeout=60, providers=[], sources={"graph": section}
    )
    async with Session(settings) as session:
        answer = await aask("Who owns Kestrel?", sources=["graph"], session=session)
    assert answer.reports[0].status == "ok", answer.reports
    assert [h.hit.location for h in answer.hits] == ["memory://Kestrel"]
    assert "payments team" in answer.hits[0].hit.text
    assert answer.citations
    assert all(c.location == "memory://Kestrel" for c in answer.citations)


def cli_env(**given: str) -> dict[str, str | None]:
    """``given`` over this process's environment, with every other SOURCEWISE_ variable unset."""
    unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith("SOURCEWISE_")}
    return unset | {"HF_HUB_OFFLINE": "1"} | dict(given)


def quoting_model(seen: Seen) -> Reply:
    """A model on 127.0.0.1 that answers with one sentence of each passage naming the migration,
    cited: what a model answering from several sources writes (the support check still applies)."""
    prompt = json.loads(seen.body)["messages"][-1]["content"]
    said = []
    for block in re.split(r"\n(?=\[\d+\] )", prompt.split("Question:")[0]):
        number = re.match(r"\[(\d+)\] ", block.strip())
        lines = block.strip().split("\n")[1:]
        sentence = next((x for x in " ".join(lines).split(". ") if "migration" in x.lower()), None)
        if number and sentence:
            said.append(f"{sentence.strip().rstrip('.')} [{number.group(1)}].")
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": " ".join(said)}}]}
    return Reply(body=json.dumps(body), content_type="application/json")


@contextmanager
def remote_door(remote_env: dict[str, str]) -> Iterator[str]:
    """The remote's MCP door over Streamable HTTP (what ``sourcewise mcp --http`` serves) in a
    uvicorn thread of this process, with the remote's settings; its /mcp URL."""
    settings = load_settings(
        config=remote_env["SOURCEWISE_CONFIG"],
        state_dir=Path(remote_env["SOURCEWISE_STATE_DIR"]),
        provider_options={"searxng": {"url": remote_env["SEARXNG_URL"]}},
        providers=["searxng"],
    )
    with uvicorn_thread(create_http_app(settings)) as base:
        yield f"{base}/mcp"


@contextmanager
def chat_door() -> Iterator[str]:
    """tests/mcp_chat_server.py over Streamable HTTP in a uvicorn thread of this process."""
    from mcp_chat_server import app

    with uvicorn_thread(app.streamable_http_app()) as base:
        yield f"{base}/mcp"


def test_ask_over_a_kb_and_two_mcp_sources_cites_each(
    tmp_path: Path, remote: dict[str, str], server: LocalServer
) -> None:
    """What is tested is the answer over three sources, so both MCP servers are real servers in
    threads of this process (a server started as a process is tested over stdio and HTTP above)."""
    server.route("/v1/chat/completions", quoting_model)
    index = kb_at(tmp_path / "local", LOCAL_DOCS)
    config = tmp_path / "config.toml"
    with chat_door() as chat_url, remote_door(remote) as remote_url:
        chat = {"type": "mcp", "url": chat_url, "tool": "search", "kind": "chat",
                "arguments": {"query": "{query}", "limit": "{limit}"},
                "results": {"items": "messages", "location": "permalink", "author": "user", "timestamp": "ts"}}  # fmt: skip
        remote_section = federated(remote, url=remote_url)
        remote_section["arguments"]["sources"] = ["kb"]
        body = section_toml("kb", {"type": "kb", "path": str(index), "semantic": False})
        body += section_toml("chat", chat) + section_toml("remote", remote_section)
        config.write_text(body, "utf-8")
        env = cli_env(SOURCEWISE_CONFIG=str(config), SOURCEWISE_STATE_DIR=str(tmp_path / "state"),
                      SOURCEWISE_PROVIDERS="searxng", SEARXNG_URL=remote["SEARXNG_URL"], SOURCEWISE_SOURCE_TIMEOUT="90",
                      SOURCEWISE_MODEL_URL=f"{server.url}/v1")  # fmt: skip
        done = run_cli(["ask", QUESTION, "-S", "kb", "-S", "chat", "-S", "remote", "--json"], env=env)
        listed = run_cli(["sources"], env=env)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["writer"] == "model", answer["warnings"]
    reports = {r["source"]: r for r in answer["reports"]}
    assert set(reports) == {"kb", "chat", "remote"}
    assert {r["status"] for r in reports.values()} == {"ok"}, reports
    assert all(r["queries"] for r in reports.values())
    cited = {answer["sources"][c["marker"] - 1]["hit"]["source"] for c in answer["citations"]}
    assert cited == {"kb", "chat", "remote"}, answer["text"]
    assert "chat (mcp, chat)" in listed.stdout
    assert "tool search; connected" in listed.stdout


def test_sources_add_mcp_writes_a_working_section(tmp_path: Path) -> None:
    """Offered a server as a command (started over stdio) and declined; then given one by URL
    (the chat server in a thread of this process: each stdio start is seconds of imports)."""
    config = tmp_path / "cfg" / "config.toml"
    env = cli_env(SOURCEWISE_STATE_DIR=str(tmp_path / "state"))
    args = ["sources", "add-mcp", "team", "--config", str(config)]
    declined = run_cli([*args, "--", sys.executable, str(CHAT)], env=env, stdin="n\n")
    assert declined.returncode == 1
    assert "search_fields" in declined.stdout
    assert "query (string, required)" in declined.stdout
    assert "[sources.team]" not in config.read_text("utf-8")
    with chat_door() as url:
        server = ["--url", url]
        done = run_cli([*args, "--yes", *server], env=env)
        assert done.returncode == 0, done.stderr
        written = config.read_text("utf-8")
        assert 'tool = "search"' in written
        assert 'kind = "chat"' in written
        assert '"limit" = "{limit}"' in written
        again = run_cli([*args, "--yes", *server], env=env)
        assert again.returncode == 2
        assert "already" in again.stderr
        listed = run_cli(["sources", "--config", str(config)], env=env)
        assert "team (mcp, chat)" in listed.stdout
        assert "connected" in listed.stdout
        searched = run_cli(
            ["search-sources", "API migration", "-S", "team", "--json", "--config", str(config)], env=env
        )
    assert searched.returncode == 0, searched.stderr
    assert json.loads(searched.stdout)[0]["hits"], searched.stdout
