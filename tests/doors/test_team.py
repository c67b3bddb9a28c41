"""Many workers, two "machines": two ``serve`` processes (two workers and one) with separate home
folders share one knowledge base on PostgreSQL and one Redis; concurrent asks over both answer, and
an index run made from anywhere is seen by both as soon as it commits. Real PostgreSQL, Redis and uvicorn."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from test_kb import tree

from sourcewise import KnowledgeBase

from redisd import redis_server
from servers import LocalServer, Reply
from teamkit import asks, home, servers


def test_two_homes_share_the_postgresql_knowledge_base(pg_url: str, tmp_path: Path) -> None:
    docs = tree(tmp_path)
    with KnowledgeBase(pg_url, semantic=False) as kb:
        kb.index([docs])
    with redis_server() as redis_url:
        envs = [home(tmp_path / name, pg_url, redis_url) for name in ("machine-a", "machine-b")]
        # Two worker processes at one home, one at the other: three processes on the one knowledge
        # base (each worker process is seconds of imports; the load is bench_teamask's).
        with servers(envs, workers=(2, 1)) as bases:
            for base in bases:
                health = httpx.get(f"{base}/health", timeout=30).json()
                assert health["store"] == "redis"
            # 12 at once, each question on both servers
            questions = ["How do I roll back a release?", "What is the session token expiry?"] * 6
            answered, errors, cited = asyncio.run(asks(bases, questions, ["team"]))
            assert errors == []
            assert len(answered) == cited == len(questions)
            # An index run from a third place is seen by both servers as soon as it commits.
            (docs / "new.md").write_text("# Zebra\n\nThe zebra crossing policy changed.\n", "utf-8")
            with KnowledgeBase(pg_url, semantic=False) as kb:
                kb.index([docs])
            for base in bases:
                got = httpx.post(f"{base}/sources/search", json={"query": "zebra crossing", "sources": ["team"]},
                                 timeout=60)  # fmt: skip
                assert got.status_code == 200, got.text
                assert [Path(h["path"]).name for h in got.json()[0]["hits"]][:1] == ["new.md"]
    for env in envs:  # each home kept its own state; none built a local index
        assert not (Path(env["SOURCEWISE_STATE_DIR"]) / "kb.sqlite3").exists()


def test_a_suspension_set_by_one_home_holds_in_the_other(server: LocalServer, tmp_path: Path) -> None:
    """Two servers with separate homes (standing in for two machines) and one Redis: SearXNG's 429
    to a search on the first suspends it, and the second then neither calls SearXNG nor says
    otherwise: its health lists the suspension and its search is a 503 naming it."""
    server.route("/sx/search", Reply(429, "slow down", headers={"retry-after": "600"}))
    with redis_server() as redis_url:
        envs = [
            {**home(tmp_path / name, str(tmp_path / "kb.sqlite3"), redis_url),
             "SEARXNG_URL": f"{server.url}/sx", "SOURCEWISE_TIMEOUT": "5"}
            for name in ("machine-a", "machine-b")
        ]  # fmt: skip
        with servers(envs, workers=1) as (a, b):
            assert httpx.get(f"{b}/health", timeout=30).json()["providers_suspended"] == []
            first = httpx.post(f"{a}/web/search", json={"query": "react server components"}, timeout=60)
            assert first.status_code == 503, first.text
            assert server.hits("/sx/search") == 1
            assert httpx.get(f"{b}/health", timeout=30).json()["providers_suspended"] == ["searxng"]
            second = httpx.post(f"{b}/web/search", json={"query": "react server components"}, timeout=60)
            assert second.status_code == 503, second.text
            assert "suspended" in second.json()["error"]["attempts"][0]["reason"]
            assert server.hits("/sx/search") == 1  # the second machine never asked SearXNG
    for env in envs:  # each home kept its own state files; the suspension lived in Redis only
        assert not (Path(env["SOURCEWISE_STATE_DIR"]) / "state.sqlite3").exists()
