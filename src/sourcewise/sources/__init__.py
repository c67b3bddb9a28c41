"""Private sources (and the web as one of them), loaded from the ``sourcewise.sources`` entry points.

Built-in sources are registered there exactly like third-party plug-ins and load through the one
registry (``sourcewise.registry``) with the providers, under one allowlist (``plugins``,
``SOURCEWISE_PLUGINS``). A ``Session`` opens and keeps them; see docs/adding-a-source.md.

A source is named in one of three ways, wherever sources are taken (``--source``, ``sources=``):

- a configured name: ``[sources.NAME]`` in the config file (``type`` plus the plug-in's options);
- a spec ``TYPE`` or ``TYPE:PATH`` (``kb``, ``code:./repo``, ``slack:./export.zip``,
  ``mail:~/mail/inbox.mbox``, ``github:./issues.json``);
- a ``Source`` object.
"""

from __future__ import annotations

from collections.abc import Iterable

from sourcewise.config import Settings
from sourcewise.errors import InvalidOption
from sourcewise.sources.base import Capabilities, Source, SourceOptions

__all__ = [
    "Capabilities",
    "Source",
    "SourceOptions",
    "load_source_types",
    "resolve_source",
    "resolve_sources",
]


def load_source_types() -> dict[str, type[Source]]:
    """Every installed source plug-in by type name (``registry``)."""
    from sourcewise.registry import discover_sources

    return dict(discover_sources()[0])


def resolve_source(spec: str | Source, settings: Settings) -> Source:
    """One source from a configured name, a ``TYPE[:PATH]`` spec or a ``Source`` object (not bound
    to a session: ``Session.source`` is what ``ask`` and the doors use)."""
    if isinstance(spec, Source):
        return spec
    from sourcewise.registry import Registry

    return Registry.load(settings).source(spec, settings)


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
