"""`sourcewise ask`, `search --source` and `sources` as a user runs them (real processes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import SMALL, run

from servers import LocalServer, Reply


@pytest.fixture
def searxng(server: LocalServer) -> LocalServer:
    server.route("/search", Reply(200, SMALL, content_type="application/json"))
    return server


def test_ask_the_web_answers_with_cited_sentences(searxng: LocalServer, tmp_path: Path) -> None:
    out = run(["ask", "React Server Components latest", "--source", "web"], tmp_path, SEARXNG_URL=searxng.url)
    assert out.returncode == 0, out.stderr
    assert "Sources:" in out.stdout
    assert "[1]" in out.stdout
    assert "Traceback" not in out.stderr


def test_ask_json_is_the_whole_answer(searxng: LocalServer, tmp_path: Path) -> None:
    out = run(
        ["ask", "React Server Components latest", "-S", "web", "--json"], tmp_path, SEARXNG_URL=searxng.url
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {"text", "citations", "sources", "reports", "plan", "route", "timings"} <= set(data)
    assert data["reports"][0]["status"] == "ok"


def test_ask_with_every_source_failing_exits_3_and_says_why(server: LocalServer, tmp_path: Path) -> None:
    # The one provider in the chain is a local server that fails: deterministic, and quick even on a
    # loaded machine (the default public chain would depend on how this machine fails to reach it).
    server.route("/search", Reply(503, "down"))
    out = run(
        ["ask", "React Server Components latest", "-S", "web"],
        tmp_path,
        SEARXNG_URL=server.url,
        SOURCEWISE_PROVIDERS="searxng",
    )
    assert out.returncode == 3
    assert "No search provider could answer" in out.stdout
    assert "Traceback" not in out.stderr
    assert "error: no source could answer (web: unavailable)" in out.stderr  # a failure says so on stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ask", "   "], "at least 1 character"),
        (["ask", "API migration", "-S", "nope"], "unknown source 'nope'"),
        (["ask", "API migration", "-S", "code:"], "no path after"),
        (["ask", "API migration", "-f", "fancy"], "ask has no 'fancy' form (--format fancy)"),
        (["search", "API migration", "-S", "nope:x"], "unknown source"),
    ],
)
def test_bad_input_exits_2_with_a_message(args: list[str], message: str, tmp_path: Path) -> None:
    out = run(args, tmp_path)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert message in out.stderr
    assert "Traceback" not in out.stderr


def test_search_source_web_prints_the_hits(searxng: LocalServer, tmp_path: Path) -> None:
    out = run(["search", "react server components", "-S", "web"], tmp_path, SEARXNG_URL=searxng.url)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("web (web):")


def test_sources_lists_configured_and_built_in(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg" / "sourcewise"
    cfg.mkdir(parents=True)
    (cfg / "config.toml").write_text('[sources.team-web]\ntype = "web"\nlimit = 3\n', "utf-8")
    out = run(["sources"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "team-web (web, web)" in out.stdout


def test_json_output_escapes_what_a_terminal_must_not_receive(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg" / "sourcewise"
    cfg.mkdir(parents=True)
    (cfg / "config.toml").write_text('[sources."team\\u202eweb"]\ntype = "web"\n', "utf-8")
    out = run(["sources", "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "\u202e" not in out.stdout
    assert {"team\u202eweb", "web"} <= {row["name"] for row in json.loads(out.stdout)}


def test_ctrl_c_during_ask_stops_every_source_and_exits_130(server: LocalServer, tmp_path: Path) -> None:
    """A real SIGINT to a real `sourcewise ask` while its web source waits on a slow provider."""
    import os
    import signal
    import subprocess
    import sys
    import time

    server.route("/search", Reply(200, SMALL, content_type="application/json", delay=30))
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_CSE_KEY", "_CSE_ID"))}
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "cfg"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        SEARXNG_URL=server.url,
        SOURCEWISE_PROVIDERS="searxng",
        SOURCEWISE_TIMEOUT="60",
        SOURCEWISE_SOURCE_TIMEOUT="60",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "sourcewise", "ask", "React Server Components latest", "-S", "web"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A shell's background job starts with SIGINT ignored, and an ignored signal stays ignored
        # across exec: give the child the default a user's terminal gives it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not server.hits("/search") and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert server.hits("/search"), "the provider was never asked"
    proc.send_signal(signal.SIGINT)
    # The provider answers after 30 s: a child that waited for it would outlast this and fail here.
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err
    assert "Traceback" not in err


MIGRATIONS = {
    "phoenix.md": "# Phoenix\n\nThe database migration to PostgreSQL 16 starts in May.\n",
    "phoenix2.md": "# Phoenix 2\n\nDatabase migration dry run passed on staging.\n",
    "cloud.md": "# Cloud\n\nThe cloud migration from AWS to GCP is halfway.\n",
    "cloud2.md": "# Cloud 2\n\nCloud migration budget was approved.\n",
    "mail.md": "# Mail\n\nEmail migration from Exchange to O365 finished.\n",
    "mail2.md": "# Mail 2\n\nEmail migration left 3 mailboxes behind.\n",
}


def test_an_ambiguous_question_at_a_terminal_asks_which_reading(tmp_path: Path) -> None:
    """A real terminal (a pty on stdin): the readings are listed one per line, the number typed
    picks one, and the answer that follows is about that reading only."""
    import os
    import pty
    import re
    import subprocess
    import sys

    from sourcewise import KnowledgeBase

    docs = tmp_path / "docs"
    docs.mkdir()
    for name, body in MIGRATIONS.items():
        (docs / name).write_text(body, "utf-8")
    cache = tmp_path / "cache"
    KnowledgeBase(cache / "sourcewise" / "kb.sqlite3", semantic=False).index([docs])
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_CSE_KEY", "_CSE_ID"))}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_CACHE_HOME=str(cache))
    leader, follower = pty.openpty()
    try:
        os.write(leader, b"2\n")  # typed ahead: the terminal holds it until the prompt reads
        out = subprocess.run(
            [sys.executable, "-m", "sourcewise", "ask", "migration 찾아줘", "-S", "kb"],
            stdin=follower,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
    finally:
        os.close(leader)
        os.close(follower)
    assert out.returncode == 0, out.stderr
    listed = dict(re.findall(r"^\s+(\d)\. (\w+) migration \(", out.stdout, re.MULTILINE))
    assert set(listed.values()) == {"database", "cloud", "email"}, out.stdout
    chosen = listed["2"].lower()
    answer = out.stdout.split("number", 1)[1]
    sentences = [ln for ln in answer.splitlines() if "migration" in ln.lower()]
    assert sentences, out.stdout
    assert all(chosen in ln.lower() for ln in sentences), (chosen, answer)


@pytest.mark.parametrize("fmt", ["deep", "progressive"])
def test_ask_formats_and_explain_list_the_cited_sources(
    searxng: LocalServer, tmp_path: Path, fmt: str
) -> None:
    question = "React Server Components latest"
    out = run(["ask", question, "-S", "web", "-f", fmt, "--explain"], tmp_path, SEARXNG_URL=searxng.url)
    assert out.returncode == 0, out.stderr
    data = json.loads(run(["ask", question, "-S", "web", "--json"], tmp_path, SEARXNG_URL=searxng.url).stdout)
    lines = out.stdout.split("\n")
    assert data["citations"]
    assert lines[0] == data["text"], "the same answer both times"
    for c in data["citations"]:
        numbered = [line for line in lines if line.startswith(f"[{c['marker']}] ")]
        assert len(numbered) == 1, out.stdout
        assert c["location"] in numbered[0]
        assert lines[lines.index(numbered[0]) + 1].startswith("    relevance "), "--explain shows the factors"
    if fmt == "deep":
        assert "All results (" in out.stdout
    else:
        assert "Dig further:" in out.stdout
        assert "-S web --format deep --explain" in out.stdout
    assert "Traceback" not in out.stderr


def test_ask_before_anything_is_indexed_says_so_not_nothing_found(tmp_path: Path) -> None:
    # A fresh state folder: the knowledge base was never indexed and nothing is configured. The
    # question needs no web, so nothing is left to search: said as that, with the fix.
    out = run(["ask", "How do I index my notes?"], tmp_path)
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert out.stderr.startswith(
        "error: kb: the knowledge base is not indexed yet: run `sourcewise index PATH`"
    )
    assert "-S web" in out.stderr
    assert "rewording" not in out.stdout + out.stderr
    assert "no source could answer" not in out.stderr
    listed = run(["sources"], tmp_path)
    assert "kb (kb, knowledge base)" in listed.stdout
    assert "[ask: once it is indexed (run `sourcewise index PATH`)]" in listed.stdout


def test_ask_with_the_web_and_no_kb_indexed_answers_from_the_web(
    searxng: LocalServer, tmp_path: Path
) -> None:
    out = run(["ask", "React Server Components latest", "--json"], tmp_path, SEARXNG_URL=searxng.url)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [r["source"] for r in data["reports"]] == ["web"]  # the unindexed kb is not searched
    assert data["sources"]
    assert any("not indexed yet" in w for w in data["warnings"])
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "rsc.md").write_text("# RSC\n\nReact Server Components render on the server.\n", "utf-8")
    assert run(["index", str(notes), "--no-semantic"], tmp_path).returncode == 0
    out = run(["ask", "React Server Components latest", "--json"], tmp_path, SEARXNG_URL=searxng.url)
    data = json.loads(out.stdout)
    assert {r["source"] for r in data["reports"]} == {"kb", "web"}  # once indexed, read by default
    assert not any("not indexed yet" in w for w in data["warnings"])
