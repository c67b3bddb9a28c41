"""Who may see which sources over the network doors: ``[access.NAME]`` sections.

Each section maps a user to a key and the sources that user may search::

    [access.alice]
    key_sha256 = "9f86d0..."   # sha256 of the key, hex; the key itself is never stored
    sources = ["kb", "docs"]
    user = "alice@corp"        # optional: who she is to the sources (a string or a list of names)
    groups = ["hr"]            # optional: the groups she is in

``sourcewise access add NAME --source A`` writes one with a fresh random key, printed once. With
any ``[access]`` section the doors (the HTTP API, MCP over HTTP) accept only those keys: the guard
(``guards.guarded``) finds the user by the key's hash and binds their ``Grant`` to the request;
``Service.door_sources`` lets a request reach only the grant's sources, for ``ask``'s fan-out,
``retrieve`` and the source search alike, and names no other source in any answer or error (a
name the caller may not use reads exactly like a name that does not exist). Without ``[access]``
sections ``SOURCEWISE_API_KEY`` keeps its meaning: one key for everything.

Inside a source, a document may carry its own readers (a file not readable by everyone, a private
Slack channel's members): ``readers()`` gives the sources the current user's principals
(``user:NAME``, ``group:NAME`` and ``*``, the mark of a public document), which they apply inside
their query. A user with no ``user`` or ``groups`` sees the public documents only.

A request that reaches a door's service with access configured but no grant bound (a code path
that forgot to bind one) is refused: the check fails closed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sourcewise.errors import ConfigError, InvalidOption, SourcewiseError

__all__ = [
    "PUBLIC", "SCOPE_KEY", "AccessDenied", "Grant", "NotPermitted", "add_user", "authenticate", "bound",
    "check", "current", "grants", "hash_key", "named", "readers", "require_web",
]  # fmt: skip

SCOPE_KEY = "sourcewise.grant"  # where the guard leaves the grant in the ASGI scope
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_HEX = re.compile(r"[0-9a-f]{64}")
_IDENTITY = re.compile(r"[^\x00-\x1f\x7f]{1,200}")  # a user or group name: any printable text
PUBLIC = "*"  # the reader of a public document: every principal list holds it
_current: ContextVar[Grant | None] = ContextVar("sourcewise_grant", default=None)


class AccessDenied(SourcewiseError):
    """No grant for a request while ``[access]`` is configured (a door's 401, naming nothing)."""


class NotPermitted(SourcewiseError):
    """A known key asked for something its grant does not include (a door's 403)."""


@dataclass(frozen=True)
class Grant:
    """One user's right: the sources they may search (configured names, ``kb``, ``web``)."""

    user: str
    sources: tuple[str, ...]
    key_sha256: str = ""
    identities: tuple[str, ...] = ()  # the ``user`` names the sources know this user by
    groups: tuple[str, ...] = ()

    def __repr__(self) -> str:  # the hash is not a secret, but it has no business in logs either
        return f"Grant(user={self.user!r}, sources={self.sources!r})"

    @property
    def principals(self) -> tuple[str, ...]:
        """``*`` (every public document), ``user:NAME`` and ``group:NAME``, case-folded."""
        named = [f"user:{u.casefold()}" for u in self.identities]
        named += [f"group:{g.casefold()}" for g in self.groups]
        return (PUBLIC, *dict.fromkeys(named))


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def grants(settings: Any) -> dict[str, Grant]:
    """The ``[access.NAME]`` sections of ``settings`` as grants; ``ConfigError`` naming a bad one."""
    table: Mapping[str, Any] = getattr(settings, "access", None) or {}
    out: dict[str, Grant] = {}
    for name, section in table.items():
        where = f"[access.{name}]"
        if not _NAME.fullmatch(str(name)):
            raise ConfigError(f"{where}: a user name is 1-64 letters, digits, '_', '.' or '-'")
        if not isinstance(section, Mapping) or set(section) - {"key_sha256", "sources", "user", "groups"}:
            raise ConfigError(f"{where}: takes key_sha256, sources, user and groups only")
        digest = section.get("key_sha256")
        if not isinstance(digest, str) or not _HEX.fullmatch(digest.lower()):
            raise ConfigError(f"{where}: key_sha256 is the sha256 of the key as 64 hex digits")
        sources = section.get("sources")
        if not isinstance(sources, list) or not sources or not all(isinstance(s, str) and s for s in sources):
            raise ConfigError(f"{where}: sources is a non-empty list of source names")
        user = section.get("user", [])
        identities = _names(where, "user", [user] if isinstance(user, str) else user)
        groups = _names(where, "groups", section.get("groups", []))
        out[str(name)] = Grant(str(name), tuple(dict.fromkeys(sources)), digest.lower(), identities, groups)
    return out


def _names(where: str, key: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and _IDENTITY.fullmatch(v) for v in value):
        raise ConfigError(f"{where}: {key} is a name or a list of names (1-200 printable characters each)")
    return tuple(dict.fromkeys(value))


def authenticate(table: Mapping[str, Grant], presented: str | None) -> Grant | None:
    """The grant whose key hashes like ``presented`` (every entry compared, in constant time)."""
    digest = hash_key(presented or "").encode()
    found = None
    for grant in table.values():
        if hmac.compare_digest(digest, grant.key_sha256.encode()) and presented:
            found = grant
    return found


@contextmanager
def bound(grant: Grant | None) -> Iterator[None]:
    """``grant`` as the current request's, for the code under it (a door binds it per request)."""
    token = _current.set(grant)
    try:
        yield
    finally:
        _current.reset(token)


def current() -> Grant | None:
    return _current.get()


def named(names: Iterable[str]) -> tuple[str, ...]:
    """The principals a source's configured readers stand for (mail's ``owner``, github's
    ``readers``): ``group:NAME`` a group, ``*`` everyone, any other name a user (``user:NAME``;
    ``user:`` may be written too), case-folded as ``Grant.principals`` folds them."""
    out: list[str] = []
    for name in names:
        kind, sep, rest = name.partition(":")
        if name == PUBLIC:
            out.append(PUBLIC)
        elif sep and kind.casefold() in ("user", "group"):
            out.append(f"{kind.casefold()}:{rest.casefold()}")
        else:
            out.append(f"user:{name.casefold()}")
    return tuple(dict.fromkeys(out))


def readers() -> tuple[str, ...] | None:
    """The principals a source lets see its documents in the current request: the bound grant's
    (``Grant.principals``), or ``None`` (no grant: the library or the CLI, used by the owner of
    the files, or a door without ``[access]`` sections) for no per-document restriction."""
    grant = _current.get()
    return None if grant is None else grant.principals


def check(settings: Any, sources: Sequence[str] | None, default: Sequence[str] | None) -> list[str] | None:
    """The sources a door request may search: ``sources`` (or ``default``; ``None``: every source the
    caller may use), cut to the current grant when ``[access]`` is configured. A name outside the
    grant is refused exactly like a name that does not exist, and the message lists only the
    grant's own."""
    table = grants(settings)
    if not table:
        return list(sources) if sources is not None else (list(default) if default is not None else None)
    grant = current()
    if grant is None:
        raise AccessDenied("missing or wrong API key")
    if sources is None:
        wanted = [s for s in (default or ()) if s in grant.sources]
        return wanted or list(grant.sources)
    if any(s not in grant.sources for s in sources):  # the names are not echoed: no oracle either way
        raise InvalidOption(
            f"a requested source is unknown or not open to this key; it may use {', '.join(grant.sources)}"
        )
    return list(sources)


def require_web(settings: Any) -> None:
    """Refuse the web doors (``/web/search``, ``/web/fetch`` and their MCP tools) to a key whose
    grant leaves ``web`` out; nothing changes without ``[access]`` sections."""
    if not grants(settings):
        return
    grant = current()
    if grant is None:
        raise AccessDenied("missing or wrong API key")
    if "web" not in grant.sources:
        raise NotPermitted(f"this key may not use the web; it may use {', '.join(grant.sources)}")


def add_user(
    path: Path,
    name: str,
    sources: Sequence[str],
    known: Sequence[str],
    user: Sequence[str] = (),
    groups: Sequence[str] = (),
) -> str:
    """Append ``[access.NAME]`` to the config file at ``path`` with a fresh key (and the ``user``
    names and ``groups`` the sources know this user by); the key, returned once (only its hash is
    written)."""
    if not _NAME.fullmatch(name):
        raise InvalidOption("a user name is 1-64 letters, digits, '_', '.' or '-'")
    if not sources:
        raise InvalidOption("give the sources this user may search: --source NAME (repeatable)")
    for key, names in (("user", user), ("groups", groups)):
        if not all(_IDENTITY.fullmatch(n) for n in names):
            raise InvalidOption(f"a {key} name is 1-200 printable characters")
    unknown = [s for s in sources if s not in known]
    if unknown:
        raise InvalidOption(f"unknown source(s) {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
    text = path.read_text("utf-8") if path.is_file() else ""
    try:
        existing = tomllib.loads(text).get("access", {})
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Config file {path} is not valid TOML: {exc}") from exc
    if name in existing:
        raise InvalidOption(f"user {name!r} already has a key in {path}; remove its section to make another")
    key = "sw_" + secrets.token_urlsafe(32)
    listed = ", ".join(json.dumps(s) for s in dict.fromkeys(sources))  # a JSON string is a TOML one
    section = f'\n[access.{name}]\nkey_sha256 = "{hash_key(key)}"\nsources = [{listed}]\n'
    for field, names in (("user", user), ("groups", groups)):
        if names:
            section += f"{field} = [{', '.join(json.dumps(n) for n in dict.fromkeys(names))}]\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as out:
        out.write(("\n" if text and not text.endswith("\n") else "") + section)
    return key
