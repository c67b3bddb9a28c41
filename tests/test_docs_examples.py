"""Every code example in README.md and docs/*.md is checked, offline.

- shell: each ``sourcewise`` command line is parsed by the real command (unknown options, bad
  choices and missing arguments fail here); the ones that need no network and no server (``route``,
  ``plan``, ``rate``, ``providers``, ``sources``, ``cache clear``, ``index`` of a folder that exists)
  are run in this process; ``pip install`` names extras that pyproject declares; ``python
  benchmarks/run.py NAME`` names a suite; ``curl`` posts JSON to a route the HTTP API has.
- TOML: parses; a user's config file loads with ``load_settings`` unless it names a plug-in that
  is not installed; a pyproject snippet uses an entry-point group sourcewise reads.
- Python: compiles; every ``from sourcewise... import`` resolves; every ``sourcewise.NAME`` exists;
  an expression followed by ``# 'value'`` gives that value.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import sourcewise
from sourcewise.config import load_settings
from sourcewise.doors.http import create_app
from sourcewise.doors.service import DoorSettings

from clirun import cli_command, run_cli

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
# Commands that answer from this machine alone (no provider, no page, no server to start).
OFFLINE = {"route", "plan", "rate", "providers", "sources", "cache", "index"}


@dataclass(frozen=True)
class Example:
    page: str
    lang: str
    text: str

    def __str__(self) -> str:
        return f"{self.page}: {self.text.splitlines()[0][:60]}"


def _examples(lang: str) -> list[Example]:
    found = [
        Example(page.relative_to(ROOT).as_posix(), m.group(1), m.group(2))
        for page in PAGES
        for m in _FENCE.finditer(page.read_text("utf-8"))
        if m.group(1) == lang
    ]
    assert found, f"no {lang} examples found in README.md and docs/"
    return found


def _commands(script: str) -> Iterator[list[str]]:
    """Each command of a shell example as words: comments dropped, lines continued, ``&&`` split,
    leading ``NAME=value`` assignments dropped."""
    for line in script.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            command, words = words[:cut], words[cut + 1 :]
            while command and re.fullmatch(r"[A-Z_]+=.*", command[0]):
                command = command[1:]
            if command:
                yield command


def _parse(args: list[str]) -> str:
    """Parse ``sourcewise ARGS`` with the real command, not running it; the subcommand's name."""
    command = cli_command()
    # Each level's context is made under its parent's, as a run makes them: the tree is shared by the
    # test process, and Click keeps a command's help option as the first context made for it says
    # (a context made alone knows only --help, not the -h the root's settings add).
    ctx = command.context_class(command, info_name="sourcewise", **command.context_settings)
    rest, name = list(args), "sourcewise"
    while rest and rest[0] in getattr(command, "commands", {}):
        name = rest.pop(0)
        command = command.commands[name]  # type: ignore[attr-defined]
        if rest and rest[0] in getattr(command, "commands", {}):
            ctx = command.context_class(command, info_name=name, parent=ctx, **command.context_settings)
    runs_alone = getattr(command, "invoke_without_command", False)  # `sources` lists; `sources add-mcp` adds
    assert runs_alone or not hasattr(command, "commands"), f"no such command: {args}"
    command.make_context(name, rest, parent=ctx)
    return args[0]


def _run_offline(args: list[str], tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    args = [str(ROOT / "docs") if a in ("docs", "./docs") else a for a in args]
    if args[0] == "index" and any(a.startswith(("~", "/")) or a.endswith(".pdf") for a in args[1:]):
        return  # a folder of the reader's (~/notes, handbook.pdf): parsed above, not run here
    out = run_cli(args, env)
    assert out.returncode == 0, (args, out.stderr)


@pytest.mark.parametrize("example", _examples("bash"), ids=str)
def test_shell_examples_parse_and_offline_ones_run(example: Example, tmp_path: Path) -> None:
    commands = list(_commands(example.text))
    assert commands, example
    for words in commands:
        if words[0] == "sourcewise":
            if _parse(words[1:]) in OFFLINE:
                _run_offline(words[1:], tmp_path)
        elif words[:3] == ["claude", "mcp", "add"]:
            assert "--" in words
            _parse(words[words.index("--") + 2 :])  # the command the client starts
        elif words[:2] == ["pip", "install"]:
            extras = re.findall(r"\[([\w,]+)\]", " ".join(words))
            for extra in (e for group in extras for e in group.split(",")):
                assert extra in PYPROJECT["project"]["optional-dependencies"], extra
        elif words[:3] == ["python", "-m", "pytest"]:
            continue  # this very suite
        elif words[:2] == ["python", "benchmarks/run.py"]:
            import runpy

            suites = runpy.run_path(str(ROOT / "benchmarks" / "run.py"))["SUITES"]
            assert all(name in suites for name in words[2:]), words
        elif words[0] == "curl":
            _check_curl(words)
        else:
            pytest.fail(f"{example}: no check for {words[0]!r}")


def _check_curl(words: list[str]) -> None:
    url = next(w for w in words if w.startswith("http"))
    path = "/" + url.split("/", 3)[3]
    with TestClient(create_app(load_settings(), DoorSettings())) as client:
        routes = client.get("/openapi.json").json()["paths"]
    assert path in routes, (path, sorted(routes))
    if "-d" in words:
        assert isinstance(json.loads(words[words.index("-d") + 1]), dict)


def _entry_point_groups() -> set[str]:
    return {f"project.entry-points.{group}" for group in PYPROJECT["project"]["entry-points"]}


@pytest.mark.parametrize("example", _examples("toml"), ids=str)
def test_toml_examples_parse_and_configs_load(example: Example, tmp_path: Path) -> None:
    data = tomllib.loads(example.text)
    if "pyproject.toml" in example.text:
        groups = data["project"]["entry-points"]
        assert set(groups) <= set(PYPROJECT["project"]["entry-points"]), groups
        return
    plugins = set(data.get("providers", {})) - {"chain"}
    kinds = {s.get("type") for s in data.get("sources", {}).values()}
    from sourcewise.registry import discover_providers, discover_sources

    if not plugins <= set(discover_providers()) or not kinds <= set(discover_sources()[1]):
        return  # a plug-in's example (acme, recipes): parsed, and its names are not installed here
    config = tmp_path / "config.toml"
    config.write_text(example.text, "utf-8")
    settings = load_settings(config)
    if "tiers" in data:
        assert settings.tiers


@pytest.mark.parametrize("example", _examples("python"), ids=str)
def test_python_examples_compile_and_name_what_exists(example: Example) -> None:
    tree = ast.parse(example.text)
    compile(example.text, example.page, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    checked = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sourcewise"):
            module = __import__(node.module, fromlist=["_"])
            for alias in node.names:
                assert hasattr(module, alias.name), f"{node.module}.{alias.name}"
                checked += 1
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "sourcewise"
        ):
            assert hasattr(sourcewise, node.attr), f"sourcewise.{node.attr}"
            checked += 1
    for line in example.text.splitlines():
        claimed = re.fullmatch(r"(sourcewise\.\w+\(.*\))\s+#\s*('[^']*')", line.strip())
        if claimed:
            assert repr(eval(claimed.group(1), {"sourcewise": sourcewise})) == claimed.group(2)
    assert checked or "sourcewise" not in example.text, example
