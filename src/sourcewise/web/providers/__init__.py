"""Web search providers, loaded from the ``sourcewise.providers`` entry-point group.

The built-in ones are registered there exactly like third-party plug-ins, and load through the
one registry (``sourcewise.registry``) with the sources. A plug-in is a package exposing a
``Provider`` value under that group; see docs/adding-a-provider.md.
"""

from __future__ import annotations

from sourcewise.web.providers.base import HttpRequest, HttpResponse, Provider

__all__ = ["HttpRequest", "HttpResponse", "Provider", "load_providers"]


def load_providers() -> dict[str, Provider]:
    """Every installed provider by name (built-ins and every plug-in; ``registry``)."""
    from sourcewise.registry import discover_providers

    return dict(discover_providers())
