"""``sourcewise access``: users of the network doors and the sources each may search (``access``).
Registered on the main app by ``doors/cli/main.py``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sourcewise._lazy import lazy_module
from sourcewise.doors.cli.common import ConfigOpt, new_app
from sourcewise.doors.cli.common import echo as _echo
from sourcewise.doors.cli.common import fail as _fail
from sourcewise.doors.cli.common import reported as _reported
from sourcewise.doors.cli.common import setup as _setup
from sourcewise.errors import InvalidOption

if TYPE_CHECKING:
    from sourcewise import access
else:  # loaded when a command runs: `sourcewise --help` stays light
    access = lazy_module("sourcewise.access")

__all__ = ["access_app", "app"]

app = new_app()
access_app = new_app(
    help="Users of the HTTP API and MCP over HTTP, each with a key and the sources they may search.",
    no_args_is_help=True,
)
app.add_typer(access_app, name="access")


@access_app.command("add")
def access_add(
    name: Annotated[str, typer.Argument(help="The user's name (letters, digits, '_', '.', '-').")],
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source", "-S", help="A source this user may search (repeatable): a configured name, kb or web."
        ),
    ] = None,
    user: Annotated[
        list[str] | None,
        typer.Option(
            "--user", help="A name the sources know this user by (repeatable), e.g. an e-mail or a login."
        ),
    ] = None,
    group: Annotated[
        list[str] | None, typer.Option("--group", help="A group this user is in (repeatable).")
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """Create a random key for NAME, print it once, and write [access.NAME] (its sha256, the
    sources, and the user names and groups that open documents with readers of their own) to the
    config file. The key is not stored: give it to the user now."""
    path = config.expanduser() if config else _config_path()
    if not path.exists():  # the first user of a server without a config file yet
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(0o600)
    settings = _setup(False, config)
    known = [*settings.sources, *(n for n in ("kb", "web") if n not in settings.sources)]
    with _reported():
        try:
            key = access.add_user(path, name, source or [], known, user or [], group or [])
        except InvalidOption as exc:
            _fail(exc, 2)
    _echo(f"added {name} to {path}: may search {', '.join(dict.fromkeys(source or []))}")
    _echo("key (shown once; only its sha256 is stored):", err=True)
    typer.echo(key)


@access_app.command("list")
def access_list(config: ConfigOpt = None) -> None:
    """Each user and the sources they may search (never a key or its hash)."""
    settings = _setup(False, config)
    with _reported():
        table = access.grants(settings)
    if not table:
        _echo("no [access] sections: the doors take the one SOURCEWISE_API_KEY (or none)")
    for grant in table.values():
        who = ", ".join([*grant.identities, *(f"group {g}" for g in grant.groups)])
        _echo(f"{grant.user}: {', '.join(grant.sources)}" + (f" (as {who})" if who else ""))


def _config_path() -> Path:
    from sourcewise.config import config_path

    return config_path()
