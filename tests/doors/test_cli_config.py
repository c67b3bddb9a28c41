"""`config path|show|check`, `keys set|path|list`, `-o FILE`, options that do not apply, progress
at a pseudo-terminal, and the doors' start-up line: as a user runs them, and with hostile input."""

from __future__ import annotations

import json
import os
import pty
import select
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_cli import run, run_process

from clirun import cli_command, run_cli
from doorkit import free_port, spawn


def _env(tmp: Path) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(tmp / "cfg"), "XDG_CACHE_HOME": str(tmp / "cache"), "NO_COLOR": "1"}


def test_config_path_names_the_file_and_says_when_it_is_missing(tmp_path: Path) -> None:
    out = run(["config", "path"], tmp_path)
    assert out.returncode == 0
    assert out.stdout.strip() == str(tmp_path / "cfg" / "sourcewise" / "config.toml")
    assert "does not exist yet" in out.stderr
    given_file = tmp_path / "team.toml"
    given_file.write_text("timeout = 5\n")
    out = run(["config", "path", "--config", str(given_file)], tmp_path)
    assert out.stdout.strip() == str(given_file)
    assert out.stderr == ""


def test_config_check_and_show(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text('timeout = 5\nmodel_api_key = "sk-very-secret"\n')
    out = run(["config", "check", "--config", str(good)], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"ok: {good}"
    shown = run(["config", "show", "--config", str(good)], tmp_path)
    data = json.loads(shown.stdout)
    assert data["timeout"] == 5
    assert "sk-very-secret" not in shown.stdout  # keys masked
    bad = tmp_path / "bad.toml"
    bad.write_text("timeout = [\n")
    out = run(["config", "check", "--config", str(bad)], tmp_path)
    assert out.returncode == 2
    assert out.stderr.startswith(f"error: Config file {bad} is not valid TOML")
    assert "Traceback" not in out.stderr


def test_keys_set_stores_0600_and_the_provider_finds_it(tmp_path: Path) -> None:
    out = run_cli(["keys", "set", "brave"], dict(_env(tmp_path)), stdin="BSA-test-key-42\n")
    assert out.returncode == 0, out.stderr
    path = tmp_path / "cfg" / "sourcewise" / "keys.json"
    assert out.stdout.strip() == f"stored BRAVE_API_KEY in {path}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {"BRAVE_API_KEY": "BSA-test-key-42"}
    assert run(["keys", "path"], tmp_path).stdout.strip() == str(path)
    listed = run(["keys", "list"], tmp_path)
    assert listed.stdout.strip() == "BRAVE_API_KEY"
    assert "BSA-test" not in listed.stdout
    providers = run(["providers"], tmp_path)
    brave = next(line for line in providers.stdout.splitlines() if line.startswith("brave "))
    assert "ready" in brave
    assert "not configured" not in brave
    assert "BSA-test" not in providers.stdout


def test_keys_set_refuses_an_unknown_name(tmp_path: Path) -> None:
    out = run(["keys", "set", "nosuch"], tmp_path)
    assert out.returncode == 2
    assert "unknown key name 'nosuch': use one of brave (BRAVE_API_KEY)" in out.stderr


HOSTILE = st.text(st.characters(codec="utf-8"), max_size=60)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=HOSTILE, value=HOSTILE)
@example(name="-0", value="")  # a name that reads as an option: the parser refuses it, exit 2
def test_keys_set_hostile_input_is_a_typed_error_or_stored(name: str, value: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        result = CliRunner().invoke(cli_command(), ["keys", "set", name], input=value, env=_env(Path(tmp)))
        assert result.exit_code in (0, 2), result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "Traceback" not in result.output
        path = Path(tmp) / "cfg" / "sourcewise" / "keys.json"
        if result.exit_code == 0:
            assert value.strip() in json.loads(path.read_text()).values()
        else:  # ours ("error: ...") or the parser's, for a name that reads as an option ("-0")
            assert result.output.startswith("error: ") or "\nError: No such option" in result.output
            assert not path.exists()  # nothing half-written


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.binary(max_size=200))
def test_config_check_of_a_hostile_file_is_ok_or_exit_2(body: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "c.toml"
        conf.write_bytes(body)
        result = CliRunner().invoke(
            cli_command(), ["config", "check", "--config", str(conf)], env=_env(Path(tmp))
        )
        assert result.exit_code in (0, 2)
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert result.output.startswith("ok: " if result.exit_code == 0 else "error: ")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stored=st.binary(max_size=120))
def test_a_hostile_keys_file_is_a_config_error(stored: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cfg" / "sourcewise" / "keys.json"
        path.parent.mkdir(parents=True)
        path.write_bytes(stored)
        result = CliRunner().invoke(cli_command(), ["keys", "list"], env=_env(Path(tmp)))
        assert result.exit_code in (0, 2)
        assert result.exception is None or isinstance(result.exception, SystemExit)
        if result.exit_code == 2:
            assert result.output.startswith(f"error: {path}") or result.output.startswith(
                "error: cannot read"
            )


@pytest.fixture
def kb_docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(30):
        (docs / f"note{i}.md").write_text(f"# Note {i}\n\nThe deploy window number {i} opens at noon.\n")
    out = run(["index", str(docs), "--no-semantic"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "30 added" in out.stdout
    return docs


def test_output_file_takes_its_format_from_the_extension(kb_docs: Path, tmp_path: Path) -> None:
    target = tmp_path / "hits.jsonl"
    out = run(["search", "deploy window", "-S", "kb", "-o", str(target)], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""
    lines = target.read_text().splitlines()
    assert lines
    assert all(json.loads(line)["source"] == "kb" for line in lines)
    answer = tmp_path / "answer.json"
    out = run(["ask", "When does the deploy window open?", "-S", "kb", "-o", str(answer)], tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(answer.read_text())["question"] == "When does the deploy window open?"
    out = run(["search", "deploy", "-S", "kb", "-o", str(tmp_path)], tmp_path)
    assert out.returncode == 2
    assert "that is a folder" in out.stderr


def test_jsonl_with_a_source_prints_one_hit_per_line(kb_docs: Path, tmp_path: Path) -> None:
    out = run(["search", "deploy window", "-S", "kb", "--jsonl"], tmp_path)
    assert out.returncode == 0, out.stderr
    hits = [json.loads(line) for line in out.stdout.splitlines()]
    assert hits
    assert {h["source"] for h in hits} == {"kb"}


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--tier", "1"], "--tier"),
        (["--strategy", "official"], "--strategy"),
        (["-p", "brave"], "--provider"),
    ],
)
def test_web_only_options_with_a_source_are_errors(tmp_path: Path, extra: list[str], named: str) -> None:
    out = run(["search", "deploy", "-S", "kb", *extra], tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip() == f"error: {named} applies to web search only, not with --source"


def _at_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run ``sourcewise ARGS`` with stdout and stderr on a pseudo-terminal; (exit code, output)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sourcewise", *args], stdout=follower, stderr=follower,
        stdin=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # the other end closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(30), b"".join(chunks).decode("utf-8", "replace")


def test_index_shows_progress_at_a_terminal_and_none_when_piped(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(120):
        (docs / f"n{i}.md").write_text(f"# N {i}\n\ntext {i}\n")
    env = {**os.environ, **_env(tmp_path), "COLUMNS": "120"}
    code, shown = _at_a_terminal(["index", str(docs), "--no-semantic"], env)
    assert code == 0, shown
    assert "indexing files" in shown
    assert "120/120" in shown
    assert "120 added" in shown
    piped = run(["index", str(docs), "--no-semantic"], tmp_path)
    assert "indexing files" not in piped.stderr + piped.stdout
    assert "120 unchanged" in piped.stdout


def test_serve_prints_its_url_and_how_to_stop(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, **_env(tmp_path), "SOURCEWISE_PROVIDERS": "duckduckgo"}
    with spawn(["serve", "--port", str(port)], env, f"http://127.0.0.1:{port}/health") as proc:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()
    assert line.startswith(f"sourcewise at http://127.0.0.1:{port}/ (the web page;")
    assert f"http://127.0.0.1:{port}/docs" in line
    assert "Ctrl-C to stop" in line


def test_the_readme_first_command_offline_prints_nothing_alarming(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sourcewise index docs && sourcewise ask "How do I index my notes?"` with no web at all."""
    from sourcewise.sources.kb import source as kbmod

    # The README's `pip install -e .` has no semantic extra, whatever this machine has installed
    # (with it, `index` embeds every chunk: minutes on a busy machine, and not the newcomer's case).
    monkeypatch.setattr(kbmod, "semantic_available", lambda: False)
    docs = Path(__file__).parent.parent.parent / "docs"
    offline = {"SOURCEWISE_PROVIDERS": "searxng", "SEARXNG_URL": f"http://127.0.0.1:{free_port()}"}
    indexed = run(["index", str(docs)], tmp_path, **offline)
    assert indexed.returncode == 0, indexed.stderr
    asked = run(["ask", "How do I index my notes?"], tmp_path, **offline)
    assert asked.returncode == 0, asked.stderr
    assert "sourcewise index" in asked.stdout
    assert "[1]" in asked.stdout
    said = indexed.stdout + indexed.stderr + asked.stdout + asked.stderr
    assert "semantic" not in indexed.stderr + asked.stderr
    assert max(len(line) for line in said.splitlines()) <= 200


def test_no_semantic_warning_unless_semantic_search_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from sourcewise.sources.kb import source as kbmod

    monkeypatch.setattr(kbmod, "semantic_available", lambda: False)  # as without the extra
    (tmp_path / "a.md").write_text("# A\n\nThe deploy window opens at noon.\n")
    with kbmod.KnowledgeBase(tmp_path / "kb.sqlite3") as base:
        report = base.index([tmp_path / "a.md"])
        hits, warnings = base.search_with_warnings("deploy window")
    assert report.embedded == 0
    assert hits
    assert warnings == []
    assert not [r for r in caplog.records if "semantic" in r.getMessage()]


def test_a_configured_source_adds_to_the_knowledge_base(kb_docs: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "n.md").write_text("# Standup\n\nThe deploy window moved to Friday.\n")
    index = tmp_path / "notes.sqlite3"
    assert run(["index", str(notes), "--kb", str(index), "--no-semantic"], tmp_path).returncode == 0
    conf = tmp_path / "c.toml"
    conf.write_text(f'[sources.notes]\ntype = "kb"\npath = "{index}"\n')
    listed = run(["sources", "--config", str(conf)], tmp_path)
    lines = {line.split(" ")[0]: line for line in listed.stdout.splitlines()}
    assert lines["notes"].endswith("[ask: configured]")
    assert lines["kb"].endswith("[ask: the knowledge base is indexed]")
    assert "[ask: when the question needs the web" in lines["web"]
    asked = run(["ask", "When is the deploy window?", "--json", "--config", str(conf)], tmp_path)
    assert asked.returncode == 0, asked.stderr
    assert {"kb", "notes"} <= {r["source"] for r in json.loads(asked.stdout)["reports"]}
    conf.write_text(f'ask_sources = ["notes"]\n[sources.notes]\ntype = "kb"\npath = "{index}"\n')
    only = run(["ask", "When is the deploy window?", "--json", "--config", str(conf)], tmp_path)
    assert {r["source"] for r in json.loads(only.stdout)["reports"]} == {"notes"}


def test_a_first_code_index_is_waited_for_not_mistaken_for_nothing(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for i in range(1500):
        (repo / f"mod{i}.py").write_text(f"def token_expiry_{i}(token):\n    return token.expires_at < {i}\n")
    question = ["ask", "Where is the token expiry checked?", "--source", f"code:{repo}"]
    out = run(question, tmp_path, SOURCEWISE_SOURCE_TIMEOUT="0.01")
    assert out.returncode == 4, out.stderr
    assert "still indexing (" in out.stderr
    assert "what is indexed is kept: run the search again to go on" in out.stderr
    # retrieve waits for the first index (under no source deadline): the files, not "nothing"
    found = run(["retrieve", "Fix the token expiry check", "--source", f"code:{repo}"], tmp_path)
    assert found.returncode == 0, found.stderr
    assert "mod" in found.stdout
    assert "nothing relevant found" not in found.stderr


def test_a_first_code_index_under_search_is_still_indexing_not_nothing(tmp_path: Path) -> None:
    """``search -S code:PATH`` takes ``ask``'s treatment (one decision, ``Source.still_indexing``):
    past ``source_timeout`` during a first index, a warning saying how far, and exit 4."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for i in range(1500):
        (repo / f"mod{i}.py").write_text(f"def token_expiry_{i}(token):\n    return token.expires_at < {i}\n")
    for command in (
        ["search", "token expiry", "-S", f"code:{repo}"],
        ["search-sources", "token", "-S", f"code:{repo}"],
    ):
        out = run(command, tmp_path, SOURCEWISE_SOURCE_TIMEOUT="0.01")
        assert out.returncode == 4, (command, out.stderr)
        assert f"warning: code:{repo}: no answer within the 0.01 s deadline: still indexing (" in out.stderr
        assert "no results" not in out.stderr
        assert out.stdout == ""
    # with time to index, the same search finds the files
    found = run(["search", "token expiry", "-S", f"code:{repo}", "--json"], tmp_path)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)[0]["hits"]


@pytest.mark.parametrize(
    "command", [["search"], ["ask"], ["retrieve"], ["index"], ["mcp"], ["serve"], ["keys", "set"]]
)
def test_help_speaks_in_words_with_an_example(tmp_path: Path, command: list[str]) -> None:
    out = run([*command, "--help"], tmp_path)
    assert out.returncode == 0
    assert "<int>" not in out.stdout
    assert "<list[str]>" not in out.stdout
    assert "Example" in out.stdout


@settings(max_examples=60, deadline=None)
@given(name=st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=80))
def test_output_to_a_hostile_file_name_is_written_or_a_clean_exit_2(name: str) -> None:
    import typer

    from sourcewise.doors.cli.common import echo, output_format, written_to

    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / name
        assert output_format("search", target, "quick") in ("json", "jsonl", "quick")
        code = 0
        try:
            with written_to(target):
                echo("results")
        except typer.Exit as stop:
            code = stop.exit_code
        if code == 0:
            assert target.read_text(encoding="utf-8") == "results\n"
        else:
            assert code == 2


def test_shell_completion_is_offered_and_completes_commands(tmp_path: Path) -> None:
    # A process of its own: typer picks the shell when the command tree is built, once per process,
    # from the nearest shell among the process's ancestors (an `sh -c` running pytest would be
    # found first): the user's bash is its parent here, kept by a command after it (no exec).
    bash = ["bash", "-c", '"$0" "$@"; exit $?']
    script = run_process(["--show-completion", "bash"], tmp_path, prefix=bash, SHELL="/bin/bash")
    assert script.returncode == 0
    assert "_sourcewise_completion" in script.stdout
    env = {**os.environ, **_env(tmp_path), "_SOURCEWISE_COMPLETE": "complete_bash",
           "COMP_WORDS": "sourcewise con", "COMP_CWORD": "1"}  # fmt: skip
    out = subprocess.run(["sourcewise"], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert {"config", "context"} <= set(out.stdout.split())
