"""Private sources (and the web as one of them), loaded from the ``sourcewise.sources`` entry points.

Built-in sources are registered there exactly like third-party plug-ins. ``SOURCEWISE_PLUGINS``
(comma-separated entry-point names) is an allowlist for third-party plug-ins: when it is set, only
the plug-ins it names are loaded; the built-ins always are.

A source is named in one of three ways, wherever sources are taken (``--source``, ``sources=``):

- a configured name: ``[sources.NAME]`` in the config file (``type`` plus the plug-in's options);
- a spec ``TYPE`` or ``TYPE:PATH`` (``kb``, ``code:./repo``, ``slack:./export.zip``,
  ``mail:~/mail/inbox.mbox``, ``github:./issues.json``);
- a ``Source`` object.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Iterable
from functools import lru_cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..config import Settings
from ..errors import ConfigError, InvalidOption
from .base import Source, SourceOptions

__all__ = ["BUILTIN", "Source", "SourceOptions", "load_source_types", "resolve_source", "resolve_sources"]

log = logging.getLogger("sourcewise")
BUILTIN: dict[str, str] = {
    "kb": "sourcewise.sources.kb:KnowledgeBaseSource",
    "code": "sourcewise.sources.code:CodeSource",
    "slack": "sourcewise.sources.slack:SlackSource",
    "mail": "sourcewise.sources.mail:MailSource",
    "github": "sourcewise.sources.github:GitHubSource",
    "web": "sourcewise.sources.web:WebSource",
}
MAX_SPEC_CHARS = 4096


def _allowed(name: str) -> bool:
    allow = os.environ.get("SOURCEWISE_PLUGINS")
    if allow is None:
        return True
    return name in {part.strip() for part in allow.split(",")}


def _load_builtin(target: str) -> type[Source] | None:
    module, _, attr = target.partition(":")
    try:
        loaded = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):  # a built-in not in this build yet
        return None
    return loaded if isinstance(loaded, type) and issubclass(loaded, Source) else None


@lru_cache(maxsize=1)
def load_source_types() -> dict[str, type[Source]]:
    """Every installed source plug-in by type name. Built-ins load even from an uninstalled tree."""
    found: dict[str, type[Source]] = {}
    for ep in entry_points(group="sourcewise.sources"):
        if BUILTIN.get(ep.name) == ep.value:
            continue  # loaded below, the same way whether installed or not
        if not _allowed(ep.name):
            continue
        try:
            cls = ep.load()
        except Exception as exc:  # a broken plug-in must not break search
            log.warning("source plug-in %r failed to load: %s", ep.name, exc)
            continue
        if isinstance(cls, type) and issubclass(cls, Source):
            found[ep.name] = cls
        else:
            log.warning("source plug-in %r is not a sourcewise Source; ignored", ep.name)
    for name, target in BUILTIN.items():
        if name not in found and (cls := _load_builtin(target)) is not None:
            found[name] = cls
    return found


def _build(name: str, type_name: str, options: dict[str, Any], settings: Settings) -> Source:
    types = load_source_types()
    cls = types.get(type_name)
    if cls is None:
        raise InvalidOption(
            f"unknown source type {type_name!r} for {name!r}; available: {', '.join(sorted(types))}"
        )
    try:
        opts = cls.Options(**options)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"source {name!r} ({type_name}): {problems}") from exc
    return cls(name, opts, settings)


def resolve_source(spec: str | Source, settings: Settings) -> Source:
    """One source from a configured name, a ``TYPE[:PATH]`` spec or a ``Source`` object."""
    if isinstance(spec, Source):
        return spec
    if not isinstance(spec, str) or not spec.strip() or len(spec) > MAX_SPEC_CHARS:
        raise InvalidOption(f"a source is a name, TYPE:PATH or a Source object; got {str(spec)[:80]!r}")
    spec = spec.strip()
    if spec in settings.sources:
        section = dict(settings.sources[spec])
        type_name = str(section.pop("type", spec))
        return _build(spec, type_name, section, settings)
    type_name, sep, path = spec.partition(":")
    if sep and not path:
        raise InvalidOption(f"source spec {spec!r} has no path after ':'")
    if type_name not in load_source_types():
        configured = ", ".join(sorted(settings.sources)) or "none"
        raise InvalidOption(
            f"unknown source {spec!r}: not a configured name (configured: {configured}) "
            f"nor a type ({', '.join(sorted(load_source_types()))}); e.g. code:./repo"
        )
    options: dict[str, Any] = {"path": Path(path)} if sep else {}
    return _build(spec, type_name, options, settings)


def resolve_sources(specs: Iterable[str | Source] | str | Source, settings: Settings) -> list[Source]:
    """Sources for ``specs``, de-duplicated by name, in order."""
    if isinstance(specs, str | Source):
        specs = [specs]
    out: dict[str, Source] = {}
    for spec in specs:
        source = resolve_source(spec, settings)
        out.setdefault(source.name, source)
    if not out:
        raise InvalidOption("no sources given")
    return list(out.values())
