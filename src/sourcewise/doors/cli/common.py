"""What every ``sourcewise`` command shares: the common options, settings and logging set-up,
printing (controls removed, ``-o FILE``), and library errors turned into exit codes.

A command module (``cli_*.py``) makes its own ``typer.Typer()``, declares its commands on it with
these helpers, and ``doors/cli/main.py`` merges it into the one app with ``app.add_typer(module.app)``.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from sourcewise.errors import (
    ConfigError,
    InvalidInput,
    InvalidOption,
    NoProviderAvailable,
    SourceStillIndexing,
    SourcewiseError,
)
from sourcewise.text.words import json_safe, printable

if TYPE_CHECKING:
    from pydantic import BaseModel
    from rich.console import Console

    from sourcewise.config import Settings

__all__ = [
    "ConfigOpt",
    "OutputOpt",
    "VerboseOpt",
    "color",
    "console",
    "echo",
    "echo_json",
    "fail",
    "guard",
    "new_app",
    "output_format",
    "reported",
    "setup",
    "still_indexing",
    "written_to",
]

log = logging.getLogger("sourcewise")

ConfigOpt = Annotated[
    Path | None, typer.Option("--config", metavar="FILE", help="TOML config file (see `config path`).")
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Say more on stderr.")]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        help="Write the results to FILE instead of the screen; .json and .jsonl choose the format.",
    ),
]
_color = {"on": True}


def new_app(**kwargs: object) -> typer.Typer:
    """A command group with the settings of the main app (plain help, no tracebacks)."""
    return typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False, **kwargs)  # type: ignore[arg-type]


def color(enabled: bool | None = None) -> bool:
    """Whether progress and status lines may use color: off with ``--no-color`` or ``NO_COLOR``."""
    if enabled is not None:
        _color["on"] = enabled
    return _color["on"] and not os.environ.get("NO_COLOR")


def console(stderr: bool = True) -> Console:
    """A rich console for progress on stderr, honouring ``--no-color`` and ``NO_COLOR``."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, no_color=not color())


class _Format(logging.Formatter):
    """Info lines as they are (the 🔍 📚 🔗 lines); warnings and errors say so."""

    def format(self, record: logging.LogRecord) -> str:
        message = printable(record.getMessage())
        return message if record.levelno < logging.WARNING else f"{record.levelname.lower()}: {message}"


def setup(verbose: bool, config: Path | None, **overrides: object) -> Settings:
    """Logging on stderr, the stored keys in the environment, then the settings (bad: exit 2)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Format())
    log.handlers[:] = [handler]
    log.setLevel(logging.INFO if verbose else logging.WARNING)
    log.propagate = False
    from sourcewise.config import load_settings
    from sourcewise.keys import apply_keys

    try:
        apply_keys()
        return load_settings(config, **overrides)
    except ConfigError as exc:
        fail(exc, 2)


def echo(text: str = "", err: bool = False) -> None:
    """Print text that may hold outside text (titles, snippets, pages): controls removed."""
    typer.echo(printable(text), err=err)


def echo_json(value: BaseModel | Sequence[BaseModel], indent: int | None = 2) -> None:
    """JSON as faithful as the data, with terminal-unsafe characters as ``\\uXXXX`` escapes."""
    data = (
        [v.model_dump(mode="json") for v in value]
        if isinstance(value, Sequence)
        else value.model_dump(mode="json")
    )
    typer.echo(json_safe(json.dumps(data, ensure_ascii=False, indent=indent)))


def fail(exc: Exception, code: int) -> NoReturn:
    echo(f"error: {exc}", err=True)
    raise typer.Exit(code)


@contextmanager
def reported() -> Iterator[None]:
    """Turn a library error into its message on stderr and the documented exit code."""
    try:
        yield
    except SourcewiseError as exc:
        guard(exc)


def still_indexing(said: Sequence[str]) -> None:
    """A source still building its first index is neither "nothing found" nor a failure: each
    ``SourceStillIndexing`` message as a warning, then exit 4 (docs/errors.md), for every command."""
    for text in said:
        echo(f"warning: {text}", err=True)
    if said:
        raise typer.Exit(4)


def guard(exc: SourcewiseError) -> NoReturn:
    if isinstance(exc, SourceStillIndexing):
        still_indexing([str(exc)])
    if isinstance(exc, InvalidInput | ConfigError):
        fail(exc, 2)
    if isinstance(exc, NoProviderAvailable):
        fail(exc, 3)
    fail(exc, 1)


def output_format(
    command: str, output: Path | None, fmt: str, as_json: bool = False, as_jsonl: bool = False
) -> str:
    """The one choice of form for every command: ``--json``/``--jsonl`` first, then ``-o FILE``'s
    ending (``formats.SUFFIXES``), then ``--format``. A form ``command`` does not write
    (``formats.FORMS``) is a usage error (exit 2) naming the option that asked for it."""
    from sourcewise.doors.formats import FORMS, SUFFIXES

    if as_json and as_jsonl:
        fail(InvalidOption("--json and --jsonl exclude each other: choose one"), 2)
    suffix = SUFFIXES.get(output.suffix.lower()) if output is not None else None
    chosen, asked = (
        ("json", "--json") if as_json
        else ("jsonl", "--jsonl") if as_jsonl
        else (suffix, f"-o {output.name}") if output is not None and suffix
        else (fmt, f"--format {fmt}")
    )  # fmt: skip
    forms = FORMS[command]
    if chosen not in forms:
        fail(InvalidOption(f"{command} has no {chosen!r} form ({asked}): it writes {', '.join(forms)}"), 2)
    return chosen


@contextmanager
def written_to(output: Path | None) -> Iterator[None]:
    """Standard output goes to ``output`` (all at once, at the end: never a half-written file)."""
    if output is None:
        yield
        return
    if output.is_dir():
        fail(InvalidOption(f"-o {output}: that is a folder; give a file name"), 2)
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        yield
    try:
        output.write_text(buffer.getvalue(), encoding="utf-8")
    except OSError as exc:
        fail(InvalidOption(f"cannot write {output}: {exc.strerror or exc}"), 2)
    typer.echo(f"wrote {output}", err=True)
