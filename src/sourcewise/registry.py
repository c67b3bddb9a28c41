"""The one plug-in registry: web search providers and sources, loaded the same way.

Both come from entry-point groups, ``sourcewise.providers`` (a ``Provider`` value) and
``sourcewise.sources`` (a ``Source`` subclass). The built-ins are entries of those groups in the
project's own metadata, and load through the same code when the tree is not installed. One
allowlist covers both groups: ``plugins`` in the settings (``SOURCEWISE_PLUGINS``, comma-separated
entry-point names); when set, only the third-party plug-ins it names load (the built-ins always do).

Each plug-in declares its own options model: a source its ``Options`` (``[sources.NAME]``), a
provider its ``options`` (``[providers.NAME]``, keys included). ``Registry.load`` validates every
configured section against it once, at the edge, and a mistake is a ``ConfigError`` naming the
plug-in and the field. The discovery itself (importing the plug-ins) is done once per process and
allowlist: it holds classes and provider declarations, never a connection or settings.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from sourcewise.errors import ConfigError, InvalidOption

if TYPE_CHECKING:
    from sourcewise.config import Settings
    from sourcewise.sources.base import Source
    from sourcewise.web.providers.base import Provider

__all__ = [
    "BUILTIN_PROVIDERS",
    "BUILTIN_SOURCES",
    "MAX_SPEC_CHARS",
    "Registry",
    "discover_providers",
    "discover_sources",
    "forget_plugins",
    "provider_options",
    "source_kinds",
]

log = logging.getLogger("sourcewise")
PROVIDERS = "sourcewise.providers"
SOURCES = "sourcewise.sources"
MAX_SPEC_CHARS = 4096
# The built-in entries, as in pyproject.toml: loaded through the same EntryPoint code when the
# package metadata is absent (a checkout run from its source tree).
BUILTIN_PROVIDERS = {
    "duckduckgo": "sourcewise.web.providers.duckduckgo:PROVIDER",
    "searxng": "sourcewise.web.providers.searxng:PROVIDER",
    "brave": "sourcewise.web.providers.brave:PROVIDER",
    "tavily": "sourcewise.web.providers.tavily:PROVIDER",
    "google": "sourcewise.web.providers.google:PROVIDER",
    "gemini": "sourcewise.web.providers.gemini:PROVIDER",
    "gemini-cli": "sourcewise.web.providers.gemini_cli:PROVIDER",
    "mcp": "sourcewise.web.providers.mcp_tool:PROVIDER",
    "ddgs": "sourcewise.web.providers.ddgs_text:PROVIDER",
    "duckduckgo_instant": "sourcewise.web.providers.duckduckgo_instant:PROVIDER",
}
BUILTIN_SOURCES = {
    "kb": "sourcewise.sources.kb.source:KnowledgeBaseSource",
    "code": "sourcewise.sources.code.source:CodeSource",
    "slack": "sourcewise.sources.messages.slack:SlackSource",
    "mail": "sourcewise.sources.messages.mail:MailSource",
    "github": "sourcewise.sources.tracker.github:GitHubSource",
    "web": "sourcewise.sources.web:WebSource",
    "mcp": "sourcewise.sources.mcp.source:McpSource",
}


def _entries(group: str, builtin: dict[str, str], allow: frozenset[str] | None) -> list[EntryPoint]:
    """The group's entry points: built-ins first (always), then the allowed third-party ones."""
    found = {name: EntryPoint(name, value, group) for name, value in builtin.items()}
    for ep in entry_points(group=group):
        if builtin.get(ep.name) == ep.value:
            continue  # a built-in, already listed
        if allow is not None and ep.name not in allow:
            continue
        found[ep.name] = ep
    return list(found.values())


def _load(ep: EntryPoint, what: str) -> Any:
    try:
        return ep.load()
    except Exception as exc:  # a broken plug-in must not break search
        log.warning("%s plug-in %r failed to load: %s", what, ep.name, exc)
        return None


@lru_cache(maxsize=4)
def discover_providers(allow: frozenset[str] | None = None) -> dict[str, Provider]:
    """Import every provider plug-in (``allow``: the third-party ones wanted)."""
    from sourcewise.web.providers.base import Provider

    providers: dict[str, Provider] = {}
    for ep in _entries(PROVIDERS, BUILTIN_PROVIDERS, allow):
        value = _load(ep, "provider")
        if isinstance(value, Provider):
            providers[value.name] = value
        elif value is not None:
            log.warning("provider plug-in %r is not a sourcewise Provider; ignored", ep.name)
    return providers


@lru_cache(maxsize=4)
def discover_sources(
    allow: frozenset[str] | None = None,
) -> tuple[dict[str, type[Source]], dict[str, type[Source]]]:
    """Import every source plug-in: (type name -> class, kind -> its first class). Separate from
    the providers, so that reading the settings does not import every source."""
    from sourcewise.sources.base import Source

    sources: dict[str, type[Source]] = {}
    for ep in _entries(SOURCES, BUILTIN_SOURCES, allow):
        value = _load(ep, "source")
        if isinstance(value, type) and issubclass(value, Source):
            sources[ep.name] = value
        elif value is not None:
            log.warning("source plug-in %r is not a sourcewise Source; ignored", ep.name)
    kinds: dict[str, type[Source]] = {}
    for cls in sources.values():
        kinds.setdefault(cls.kind, cls)
    return sources, kinds


def forget_plugins() -> None:
    """Discover again on next use (a package installed while the process runs)."""
    discover_providers.cache_clear()
    discover_sources.cache_clear()


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors())


@dataclass(frozen=True)
class Registry:
    """The plug-ins one session uses, with every configured provider's options validated."""

    providers: dict[str, Provider]
    provider_options: dict[str, BaseModel] = field(default_factory=dict)
    allow: frozenset[str] | None = None

    @classmethod
    def load(cls, settings: Settings) -> Registry:
        """The plug-ins the settings allow; ``ConfigError`` for an unknown provider in the chain or
        a ``[providers.NAME]`` section its provider does not accept."""
        allow = _allow(settings)
        providers = discover_providers(allow)
        unknown = [name for name in settings.providers if name not in providers]
        if unknown:
            raise ConfigError(
                f"unknown provider(s) {', '.join(unknown)} in `providers` (from the config file or "
                f"SOURCEWISE_PROVIDERS); known: {', '.join(sorted(providers))}"
            )
        extra = sorted(set(settings.provider_options) - set(providers))
        if extra:
            raise ConfigError(
                f"[providers.{extra[0]}]: no such provider; known: {', '.join(sorted(providers))}"
            )
        return cls(providers, provider_options(providers, settings), allow)

    @property
    def source_types(self) -> dict[str, type[Source]]:
        """Source plug-ins by type name (imported on first use)."""
        return discover_sources(self.allow)[0]

    def options_for(self, provider: str) -> BaseModel | None:
        """The validated ``[providers.NAME]`` options of a provider that declares a model."""
        return self.provider_options.get(provider)

    # -- sources -------------------------------------------------------------------------------
    def build_source(self, name: str, type_name: str, options: dict[str, Any], settings: Settings) -> Source:
        cls = self.source_types.get(type_name)
        if cls is None:
            raise InvalidOption(
                f"unknown source type {type_name!r} for {name!r}; available: "
                f"{', '.join(sorted(self.source_types))}"
            )
        try:
            opts = cls.Options(**options)
        except ValidationError as exc:
            raise ConfigError(f"source {name!r} ({type_name}): {_problems(exc)}") from exc
        return cls(name, opts, settings)

    def source(self, spec: str, settings: Settings) -> Source:
        """One source from a configured name (``[sources.NAME]``) or a ``TYPE[:PATH]`` spec."""
        if not isinstance(spec, str) or not spec.strip() or len(spec) > MAX_SPEC_CHARS:
            raise InvalidOption(f"a source is a name, TYPE:PATH or a Source object; got {str(spec)[:80]!r}")
        spec = spec.strip()
        if spec in settings.sources:
            section = dict(settings.sources[spec])
            type_name = str(section.pop("type", spec))
            return self.build_source(spec, type_name, section, settings)
        type_name, sep, path = spec.partition(":")
        if sep and not path:
            raise InvalidOption(f"source spec {spec!r} has no path after ':'")
        if type_name not in self.source_types:
            configured = ", ".join(sorted(settings.sources)) or "none"
            raise InvalidOption(
                f"unknown source {spec!r}: not a configured name (configured: {configured}) "
                f"nor a type ({', '.join(sorted(self.source_types))}); e.g. code:./repo"
            )
        options: dict[str, Any] = {"path": path} if sep else {}  # pydantic makes it a Path (or a URL: kb)
        return self.build_source(spec, type_name, options, settings)

    def kinds(self) -> dict[str, type[Source]]:
        """One source class per kind (the first type declaring it), for rendering a plan by kind."""
        return discover_sources(self.allow)[1]


def provider_options(providers: dict[str, Provider], settings: Settings) -> dict[str, BaseModel]:
    """Each provider's validated ``[providers.NAME]`` options (for those that declare a model);
    ``ConfigError`` naming the provider and the field for a bad one."""
    options: dict[str, BaseModel] = {}
    for name, provider in providers.items():
        section = settings.provider_options.get(name, {})
        if provider.options is None:
            if section:
                raise ConfigError(
                    f"provider {name!r}: takes no [providers.{name}] options; its settings are "
                    "top-level keys (see `sourcewise providers`)"
                )
            continue
        try:
            # called, not model_validate: an options model may be a BaseSettings that also
            # reads the provider's usual environment variables (FOO_API_KEY ...)
            options[name] = provider.options(**section)
        except ValidationError as exc:
            raise ConfigError(f"provider {name!r} ([providers.{name}]): {_problems(exc)}") from exc
    return options


def _allow(settings: Settings) -> frozenset[str] | None:
    return frozenset(settings.plugins) if settings.plugins is not None else None


def source_kinds(settings: Settings) -> dict[str, type[Source]]:
    """Kind -> source class for the plug-ins ``settings`` allow (no options validated: planning)."""
    return discover_sources(_allow(settings))[1]
