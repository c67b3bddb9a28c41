"""`-o FILE` and `--format`: one choice of form for every command, and a form a command does not
write is a usage error that names the command, what asked for the form and the forms it has."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import run
from test_cli_config import kb_docs  # noqa: F401  (a fixture: 30 notes indexed)

from sourcewise.doors.formats import FORMS


@pytest.mark.parametrize(
    ("args", "asked"),
    [
        (["ask", "How do I index my notes?", "-S", "kb", "-o", "{tmp}/a.jsonl"], "-o a.jsonl"),
        (["ask", "How do I index my notes?", "-S", "kb", "-o", "{tmp}/a.NDJSON"], "-o a.NDJSON"),
        (["ask", "How do I index my notes?", "-S", "kb", "--format", "jsonl"], "--format jsonl"),
        (["retrieve", "Fix the token expiry bug", "-S", "kb", "-o", "{tmp}/r.jsonl"], "-o r.jsonl"),
        (["search-sources", "token", "--format", "markdown"], "--format markdown"),
    ],
)
def test_a_form_the_command_does_not_write_is_a_usage_error(
    args: list[str], asked: str, tmp_path: Path
) -> None:
    out = run([a.replace("{tmp}", str(tmp_path)) for a in args], tmp_path)
    command = args[0]
    assert out.returncode == 2, out.stderr
    assert f"error: {command} has no" in out.stderr
    assert f"({asked})" in out.stderr
    assert ", ".join(FORMS[command]) in out.stderr
    assert "Traceback" not in out.stderr
    assert out.stdout == ""
    assert not [p for p in tmp_path.iterdir() if p.suffix.lower() in (".jsonl", ".ndjson")]


@pytest.mark.usefixtures("kb_docs")
def test_each_ending_a_command_has_a_form_for_selects_it(tmp_path: Path) -> None:
    hits = tmp_path / "hits.ndjson"
    out = run(["search-sources", "deploy window", "-o", str(hits)], tmp_path)
    assert out.returncode == 0, out.stderr
    lines = hits.read_text().splitlines()
    assert lines
    assert {json.loads(line)["source"] for line in lines} == {"kb"}
    found = tmp_path / "r.JSON"
    out = run(["retrieve", "open the deploy window", "-S", "kb", "-o", str(found)], tmp_path)
    assert out.returncode in (0, 3), out.stderr
    assert json.loads(found.read_text())["task"] == "open the deploy window"
    text = tmp_path / "r.txt"
    out = run(["retrieve", "open the deploy window", "-S", "kb", "-o", str(text)], tmp_path)
    assert text.read_text().startswith("Task: open the deploy window")
