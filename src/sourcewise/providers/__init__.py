"""Web search providers, loaded from the ``sourcewise.providers`` entry-point group.

The built-in ones are registered there exactly like third-party plug-ins. A plug-in is a
package exposing a ``Provider`` value under that group.
"""

from __future__ import annotations

import importlib
import logging
from functools import lru_cache
from importlib.metadata import entry_points

from .base import HttpRequest, HttpResponse, Provider

__all__ = ["BUILTIN", "HttpRequest", "HttpResponse", "Provider", "load_providers"]

log = logging.getLogger("sourcewise")
BUILTIN = (
    "duckduckgo",
    "searxng",
    "brave",
    "tavily",
    "google",
    "gemini",
    "gemini-cli",
    "mcp",
    "ddgs",
    "duckduckgo_instant",
)
# Provider names that are not module names (or would shadow the library they wrap).
_MODULES = {"gemini-cli": "gemini_cli", "mcp": "mcp_tool", "ddgs": "ddgs_text"}


@lru_cache(maxsize=1)
def load_providers() -> dict[str, Provider]:
    """Every installed provider by name. Built-ins load even from an uninstalled source tree."""
    found: dict[str, Provider] = {}
    for ep in entry_points(group="sourcewise.providers"):
        try:
            provider = ep.load()
        except Exception as exc:  # a broken plug-in must not break search
            log.warning("provider plug-in %r failed to load: %s", ep.name, exc)
            continue
        if isinstance(provider, Provider):
            found[provider.name] = provider
        else:
            log.warning("provider plug-in %r is not a sourcewise Provider; ignored", ep.name)
    for name in BUILTIN:
        if name not in found:
            found[name] = importlib.import_module(f"{__name__}.{_MODULES.get(name, name)}").PROVIDER
    return found
