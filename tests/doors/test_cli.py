"""`sourcewise` as a user runs it, against a SearXNG-compatible server on 127.0.0.1: in this process
(`clirun`), and once as a real process to show the installed command behaves the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from clirun import Ran, run_cli
from conftest import FIXTURES
from servers import LocalServer, Reply

SMALL = (FIXTURES / "searxng_small.json").read_text("utf-8")


def _env(tmp_path: Path, env: dict[str, str]) -> dict[str, str | None]:
    xdg = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    return {"SEARXNG_URL": None, **xdg, **env}


def run(args: list[str], tmp_path: Path, **env: str) -> Ran:
    return run_cli(args, _env(tmp_path, env))


def run_process(
    args: list[str], tmp_path: Path, *, prefix: Sequence[str] = (), **env: str
) -> subprocess.CompletedProcess[str]:
    """The CLI as a child process (``prefix``: a command that runs it, such as ``setpriv ...``)."""
    base = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_CSE_KEY", "_CSE_ID"))}
    base.pop("SEARXNG_URL", None)
    base.update({k: v for k, v in _env(tmp_path, env).items() if v is not None})
    return subprocess.run(
        [*prefix, sys.executable, "-m", "sourcewise", *args],
        capture_output=True,
        text=True,
        env=base,
        timeout=60,
        check=False,
    )


@pytest.fixture
def searxng(server: LocalServer) -> LocalServer:
    server.route("/search", Reply(200, SMALL, content_type="application/json"))
    return server


def test_search_markdown_from_a_real_process(searxng: LocalServer, tmp_path: Path) -> None:
    out = run_process(
        ["search", "React Server Components"],
        tmp_path,
        SEARXNG_URL=searxng.url,
        SOURCEWISE_PROVIDERS="searxng",
    )
    assert out.returncode == 0, out.stderr
    assert "## Answer" in out.stdout
    assert "Sources:" in out.stdout
    assert "[Server Components – React](https://react.dev/reference/rsc/server-components)" in out.stdout
    assert searxng.seen[0].query.startswith("q=React+Server+Components")


def test_search_tier_1_json(searxng: LocalServer, tmp_path: Path) -> None:
    out = run(
        ["search", "React Server Components", "--tier", "1", "--json"],
        tmp_path,
        SEARXNG_URL=searxng.url,
        SOURCEWISE_PROVIDERS="searxng",
    )
    assert out.returncode == 0, out.stderr
    response = json.loads(out.stdout)  # the whole response: results, provider, attempts, warnings
    assert response["provider"] == "searxng"
    assert {"query", "strategy", "attempts", "warnings"} <= set(response)
    results = response["results"]
    assert [r["tier"] for r in results] == [1]
    first = results[0]
    assert first["reliability_score"] >= 95
    assert {"title", "url", "snippet", "tier", "reliability_score", "providers"} <= set(first)
    assert first["providers"][0]["provider"] == "searxng"


def test_search_jsonl_and_verbose_provider(searxng: LocalServer, tmp_path: Path) -> None:
    out = run(
        ["search", "React Server Components", "--jsonl", "-v", "-p", "SearXNG"],
        tmp_path,
        SEARXNG_URL=searxng.url,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) > 1
    assert all(json.loads(line)["url"].startswith("http") for line in lines)
    assert "answered by searxng" in out.stderr


def test_help_version_and_choices(tmp_path: Path) -> None:
    helped = run(["search", "-h"], tmp_path)
    assert helped.returncode == 0
    assert "<bool>" not in helped.stdout
    assert "default|official|comprehensive|progressive" in helped.stdout
    assert "quick|deep|progressive|json" in helped.stdout
    assert "seed" not in run(["--help"], tmp_path).stdout.lower()
    assert run(["--version"], tmp_path).stdout.startswith("sourcewise ")


def test_quick_lists_each_link_once(searxng: LocalServer, tmp_path: Path) -> None:
    out = run(
        ["search", "React Server Components"],
        tmp_path,
        SEARXNG_URL=searxng.url,
        SOURCEWISE_PROVIDERS="searxng",
    )
    assert out.returncode == 0, out.stderr
    link = "(https://react.dev/reference/rsc/server-components)"
    assert out.stdout.count(link) == 1


@pytest.mark.parametrize("fmt", ["deep", "progressive"])
def test_other_formats(searxng: LocalServer, tmp_path: Path, fmt: str) -> None:
    out = run(
        ["search", "React Server Components", "--format", fmt],
        tmp_path,
        SEARXNG_URL=searxng.url,
        SOURCEWISE_PROVIDERS="searxng",
    )
    assert out.returncode == 0, out.stderr
    assert "Sources:" in out.stdout
    assert ("reliability:" in out.stdout) if fmt == "deep" else ("Explore further" in out.stdout)


def test_no_results_prints_empty_list_and_warns(server: LocalServer, tmp_path: Path) -> None:
    server.route(
        "/search", Reply(200, (FIXTURES / "searxng_empty.json").read_text(), content_type="application/json")
    )
    out = run(
        ["search", "zzqxjvbnm", "--json"], tmp_path, SEARXNG_URL=server.url, SOURCEWISE_PROVIDERS="searxng"
    )
    assert out.returncode == 0
    assert json.loads(out.stdout)["results"] == []
    assert "No results" in out.stderr


def test_no_provider_reachable(server: LocalServer, tmp_path: Path) -> None:
    server.route("/search", Reply(503, "down"))
    out = run(
        ["search", "React Server Components"],
        tmp_path,
        SEARXNG_URL=server.url,
        SOURCEWISE_PROVIDERS="searxng,brave",
        SOURCEWISE_TIMEOUT="2",
    )
    assert out.returncode == 3
    assert "error: No search provider could answer: searxng: transient: HTTP 503" in out.stderr
    assert "(1 more not configured)" in out.stderr  # counted, not listed: the cause comes first
    assert out.stdout == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "ab"], "at least 3 characters"),
        (["search", "react", "--tier", "7"], "tier must be"),
        (["search", "react", "-n", "0"], "at least 1"),
        (["search", "react", "--format", "xml"], "is not one of"),
        (["search", "react", "-p", "bing"], "unknown provider"),
    ],
)
def test_bad_input_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    out = run(args, tmp_path, SOURCEWISE_PROVIDERS="searxng")
    assert out.returncode == 2
    assert message in out.stderr


def test_bad_config_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("providers = [unclosed")
    out = run(["providers", "--config", str(bad)], tmp_path)
    assert out.returncode == 2
    assert "not valid TOML" in out.stderr


def test_providers_lists_state_and_never_prints_keys(tmp_path: Path) -> None:
    out = run(["providers", "--json"], tmp_path, BRAVE_API_KEY="brv-secret-777")
    assert out.returncode == 0
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert rows["brave"]["configured"] is True
    assert rows["tavily"]["configured"] is False
    assert rows["duckduckgo"]["configured"] is True
    assert "brv-secret-777" not in out.stdout + out.stderr
    text = run(["providers"], tmp_path, BRAVE_API_KEY="brv-secret-777")
    assert "brv-secret-777" not in text.stdout + text.stderr
    assert "TAVILY_API_KEY" in text.stdout


def test_rate_command(tmp_path: Path) -> None:
    out = run(["rate", "https://react.dev/learn", "-q", "react"], tmp_path)
    assert out.returncode == 0
    assert json.loads(out.stdout)["tier"] == 1
    assert run(["rate", "ftp://x"], tmp_path).returncode == 2


def test_route_and_plan_commands(tmp_path: Path) -> None:
    out = run(["route", "AI 헬스케어 최신 트렌드", "--today", "2026-11-21"], tmp_path)
    assert out.returncode == 0
    assert out.stdout.startswith("search:")
    assert '"최신"' in out.stdout
    assert '"AI"' in out.stdout
    assert "query: AI 헬스케어 트렌드 2026" in out.stdout
    plan = run(
        ["plan", "What did we decide about the API migration timeline?", "--json", "--today", "2026-11-21"],
        tmp_path,
    )
    assert plan.returncode == 0
    data = json.loads(plan.stdout)
    assert data["query_type"]["kind"] == "decision"
    assert {q["source"] for q in data["sources"]} == {"chat", "knowledge_base", "project_tracker"}
    assert (
        run(["route", "ab"], tmp_path).returncode == 0
    )  # a short question is fine: private sources answer it
    assert run(["route", "   "], tmp_path).returncode == 2
    assert run(["plan", "valid question", "--today", "yesterday"], tmp_path).returncode == 2


def test_fetch_command_and_cache(server: LocalServer, tmp_path: Path) -> None:
    server.route(
        "/page",
        Reply(
            200,
            "<html><head><title>Guide</title></head><body><article><h1>Guide</h1><p>Install the tool with pip and run it once to create the config.</p><p>Then set your keys in the environment.</p></article></body></html>",
        ),
    )
    url = server.url + "/page"
    refused = run(["fetch", url], tmp_path)
    assert refused.returncode == 1
    assert "loopback" in refused.stderr
    first = run(["fetch", url, "--allow-private", "--prompt", "how to install"], tmp_path)
    assert first.returncode == 0, first.stderr
    assert "# Guide" in first.stdout
    assert "## Passages" in first.stdout
    assert "Install the tool with pip" in first.stdout
    second = run(["fetch", url, "--allow-private", "--json"], tmp_path)
    assert json.loads(second.stdout)["from_cache"] is True
    assert server.hits("/page") == 1
    fresh = run(["fetch", url, "--allow-private", "--no-cache", "--json"], tmp_path)
    assert json.loads(fresh.stdout)["from_cache"] is False
    cleared = run(["cache", "clear"], tmp_path)
    assert "removed" in cleared.stdout
    run(["fetch", url, "--allow-private"], tmp_path)
    assert server.hits("/page") == 3
