"""The ``sourcewise`` command: parse, call the public API, print. Exit codes:
0 success (including zero results, with a warning on stderr), 1 other errors,
2 bad input or config, 3 no provider (or, for `ask` and `retrieve`, no source) could answer,
4 a source is still building its first index (run again), 130 interrupted (Ctrl-C).

Each group of commands lives in its own module (``doors.cli.web``, ``doors.cli.sources``, ``doors.cli.index``,
``doors.cli.config``, ``doors.cli.doors``) with its own ``typer.Typer()``; this module makes the one app and
merges them with ``app.add_typer(module.app)``. Shared options and printing: ``doors.cli.common``.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from sourcewise._version import __version__
from sourcewise.doors.cli import access as cli_access
from sourcewise.doors.cli import config as cli_config
from sourcewise.doors.cli import index as cli_index
from sourcewise.doors.cli import mcp as cli_mcp  # noqa: F401 (registers `sources add-mcp` on the sources group)
from sourcewise.doors.cli import sources as cli_sources
from sourcewise.doors.cli import web as cli_web
from sourcewise.doors.cli.common import (
    ConfigOpt,
    VerboseOpt,
    color,
)
from sourcewise.doors.cli.common import (
    echo as _echo,
)
from sourcewise.doors.cli.common import (
    echo_json as _echo_json,
)
from sourcewise.doors.cli.common import (
    fail as _fail,
)
from sourcewise.doors.cli.common import (
    guard as _guard,
)
from sourcewise.doors.cli.common import (
    reported as _reported,
)
from sourcewise.doors.cli.common import (
    setup as _setup,
)
from sourcewise.doors.cli.doors import add_door_commands

__all__ = [
    "ConfigOpt",
    "VerboseOpt",
    "_echo",
    "_echo_json",
    "_fail",
    "_guard",
    "_reported",
    "_setup",
    "app",
    "command",
    "main",
]

HELP = """Cited answers from your own files and sources and from the web, each source rated by
how far it can be trusted (tier 1 official ... tier 4 blogs).

Start with a knowledge base of your notes: `sourcewise index ~/notes`, then
`sourcewise ask "How do I ...?"`. `sourcewise search` searches the web; `sourcewise sources`
lists what `ask` reads. Settings: `sourcewise config path`; keys: `sourcewise keys set NAME`.
"""

app = typer.Typer(
    no_args_is_help=True,
    help=HELP,
    # Plain click help: flags show as flags (rich help prints "--json <bool>").
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"sourcewise {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit."),
    ] = False,
    no_color: Annotated[
        bool, typer.Option("--no-color", help="No color in progress and status lines (also: NO_COLOR=1).")
    ] = False,
) -> None:
    """Cited answers from your own sources and the web, each source rated by trust."""
    color(not no_color)


for _group in (cli_web, cli_sources, cli_index, cli_config, cli_access):
    app.add_typer(_group.app)
add_door_commands(app, _setup, _fail)

WORDS = {"int": "N", "int range": "N", "float": "SECONDS", "str": "TEXT", "list[str]": "TEXT", "path": "PATH"}


def _in_words(command: Any) -> Any:
    """Help with metavars in words (``-n N``, ``QUERY``, ``quick|deep``), not typer's type names
    (``<int>``, ``<list[str]>``, ``{query}``), on every command of the tree."""
    for param in command.params:
        if param.metavar is not None or getattr(param, "is_flag", False):
            continue
        if param.param_type_name == "argument":
            param.metavar = (param.name or "value").upper()
            continue
        label = param.display_type(None).strip("<>")
        param.metavar = WORDS.get(label, label.removeprefix("list[").removesuffix("]"))
    for sub in getattr(command, "commands", {}).values():
        _in_words(sub)
    return command


def command() -> Any:
    """The command tree as it runs: typer's, with its help in words."""
    return _in_words(typer.main.get_command(app))


def main() -> None:
    command()(prog_name="sourcewise")
