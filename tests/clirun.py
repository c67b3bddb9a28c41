"""`sourcewise ARGS` run in this process, for the CLI tests that do not test the process itself.

Starting a Python process costs about a second of imports on these machines (several under load), and
dozens of tests only read a command's output and exit code; they call `run_cli`. The tests of the process
itself (signals, start-up, stdio MCP, two processes sharing state) still start one.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from click.testing import CliRunner

from sourcewise.doors.cli.main import command


@functools.cache
def cli_command() -> Any:
    """The command tree, built once per test process: typer builds it by reading every command's
    signature (~0.1 s of CPU, more than most commands take to run), as a process does once at start.
    A Click command keeps no state between invocations: each one gets its own context."""
    return command()


@dataclass(frozen=True)
class Ran:
    """What a finished command left: the same three fields as `subprocess.CompletedProcess`."""

    returncode: int
    stdout: str
    stderr: str


def run_cli(args: list[str], env: Mapping[str, str | None] | None = None, stdin: str | None = None) -> Ran:
    """Run one command with ``env`` over the test's environment (``None`` unsets a variable).

    An exception that escapes the command fails the test with its traceback, as a process would have
    printed one: only `SystemExit` is a way to finish.
    """
    # The command points the library's logger at its own stderr: conftest's `_library_logger` gives
    # it back after the test.
    result = CliRunner().invoke(cli_command(), args, env=dict(env or {}), input=stdin, prog_name="sourcewise")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)
