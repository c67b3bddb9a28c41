"""``sourcewise config path|show|check`` and ``sourcewise keys set|path|list``: settings you can find."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from sourcewise.doors.cli.common import ConfigOpt, echo, new_app, reported, setup
from sourcewise.text.words import json_safe

__all__ = ["app"]

app = new_app()
config_app = new_app(
    help="Where the config file is, what it holds, whether it is valid.", no_args_is_help=True
)
keys_app = new_app(help="API keys stored for the providers (mode 0600).", no_args_is_help=True)
app.add_typer(config_app, name="config")
app.add_typer(keys_app, name="keys")


@config_app.command("path")
def config_path_cmd(config: ConfigOpt = None) -> None:
    """Print the config file's path (from --config, SOURCEWISE_CONFIG or the default place).

    Example: sourcewise config path
    """
    from sourcewise import config as cfg

    path = config.expanduser() if config is not None else cfg.config_path()
    echo(str(path))
    if not path.is_file():
        echo(
            f"({path} does not exist yet: create it to change a setting; see docs/configuration.md)", err=True
        )


@config_app.command("show")
def config_show(config: ConfigOpt = None) -> None:
    """Print the settings in force (defaults, file, environment) as JSON; keys are masked.

    Example: sourcewise config show | jq .providers
    """
    settings = setup(False, config)
    typer.echo(json_safe(json.dumps(settings.model_dump(mode="json"), ensure_ascii=False, indent=2)))


@config_app.command("check")
def config_check(config: ConfigOpt = None) -> None:
    """Validate the config file, the SOURCEWISE_* environment and every plug-in's options.

    Exits 0 when valid, 2 with the problem and the file otherwise.
    Example: sourcewise config check --config team.toml
    """
    from sourcewise import config as cfg

    setup(False, config)  # a problem: its message and exit 2
    path = config.expanduser() if config is not None else cfg.config_path()
    where = str(path) if path.is_file() else f"defaults (no file at {path})"
    echo(f"ok: {where}")


@keys_app.command("path")
def keys_path_cmd() -> None:
    """Print the file that stored keys are written to.

    Example: sourcewise keys path
    """
    from sourcewise.keys import keys_path

    echo(str(keys_path()))


@keys_app.command("set")
def keys_set(
    name: Annotated[
        str,
        typer.Argument(
            metavar="NAME",
            help="brave, tavily, google, google-cse-id, gemini, openai, server, or the variable.",
        ),
    ],
) -> None:
    """Store a key, read from a hidden prompt (or standard input when piped), never the command line.

    The environment variable of the same name still wins over the stored key.
    Example: sourcewise keys set brave
    """
    from sourcewise.keys import key_name, set_key

    with reported():
        var = key_name(name)
        piped = not sys.stdin.isatty()
        value = sys.stdin.read(8192) if piped else typer.prompt(var, hide_input=True)
        stored, path = set_key(var, value)
    echo(f"stored {stored} in {path}")


@keys_app.command("list")
def keys_list() -> None:
    """List the names of the stored keys (never their values).

    Example: sourcewise keys list
    """
    from sourcewise.keys import stored_keys

    with reported():
        names = sorted(stored_keys())
    for var in names:
        echo(var)
    if not names:
        echo("no stored keys: `sourcewise keys set NAME` stores one", err=True)
