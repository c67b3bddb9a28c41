"""sourcewise: trustworthy, de-duplicated, cited search over the web and private sources.

Names are imported on first use (PEP 562), so that ``import sourcewise`` and ``sourcewise --help``
stay fast: the HTTP client, pydantic-settings, the page extractors and the rest load when needed.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from sourcewise._version import __version__

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from sourcewise.ask import aask
    from sourcewise.config import Settings, load_settings
    from sourcewise.doors.render import render
    from sourcewise.errors import (
        AddressNotAllowed,
        AuthError,
        Blocked,
        ChallengePage,
        ConfigError,
        EmptyContent,
        FetchConnectionError,
        FetchError,
        FetchHTTPError,
        FetchTimeout,
        IndexDamaged,
        IndexVersionError,
        IndexWriteError,
        InvalidInput,
        InvalidOption,
        InvalidQuery,
        InvalidURL,
        ModelError,
        NoProviderAvailable,
        ParseError,
        ProviderError,
        ProviderNotConfigured,
        QuotaExceeded,
        RateLimited,
        RobotsDisallowed,
        SourceError,
        SourceFormatError,
        SourceRateLimited,
        SourceStillIndexing,
        SourceUnavailable,
        SourcewiseError,
        StoreUnavailable,
        TooManyRedirects,
        TransientError,
        UnsupportedContent,
    )
    from sourcewise.models import (
        Answer,
        Candidate,
        Citation,
        Constraints,
        Cycle,
        Factor,
        FoundBy,
        Hit,
        Learned,
        Page,
        Passage,
        Plan,
        ProviderHit,
        ProviderStatus,
        QueryType,
        RankedHit,
        Reading,
        Retrieval,
        Route,
        SearchResponse,
        SearchResult,
        SourceInfo,
        SourceQuery,
        SourceRating,
        SourceReport,
        SourceResult,
    )
    from sourcewise.net.fetch import Fetcher
    from sourcewise.planning.routing import (
        WebContext,
        aconditional_web_search,
        classify_query,
        conditional_web_search,
        plan,
        route,
    )
    from sourcewise.retrieve import aretrieve
    from sourcewise.session import Session
    from sourcewise.sources import Source, SourceOptions
    from sourcewise.sources.api import (
        asearch_sources,
        ask,
        asource_info,
        retrieve,
        search_sources,
        source_info,
    )
    from sourcewise.sources.kb.index import IndexReport
    from sourcewise.sources.kb.source import KnowledgeBase
    from sourcewise.web.api import asearch, insert_citations, provider_status, rate_source, search
    from sourcewise.web.pages import afetch, fetch
    from sourcewise.web.robots import robots_allowed
    from sourcewise.web.urls import TRACKING_PARAMS, canonical_url
    from sourcewise.web.weburls import extract_urls

# public name -> the module (relative to this package) that defines it
_WHERE: dict[str, str] = {
    "asearch": "sourcewise.web.api",
    "provider_status": "sourcewise.web.api",
    "rate_source": "sourcewise.web.api",
    "search": "sourcewise.web.api",
    "aask": "sourcewise.ask",
    "Settings": "sourcewise.config",
    "load_settings": "sourcewise.config",
    "insert_citations": "sourcewise.web.api",
    "render": "sourcewise.doors.render",
    "robots_allowed": "sourcewise.web.robots",
    "TRACKING_PARAMS": "sourcewise.web.urls",
    "canonical_url": "sourcewise.web.urls",
    "extract_urls": "sourcewise.web.weburls",
    "AddressNotAllowed": "sourcewise.errors",
    "AuthError": "sourcewise.errors",
    "Blocked": "sourcewise.errors",
    "ChallengePage": "sourcewise.errors",
    "ConfigError": "sourcewise.errors",
    "EmptyContent": "sourcewise.errors",
    "FetchConnectionError": "sourcewise.errors",
    "FetchError": "sourcewise.errors",
    "FetchHTTPError": "sourcewise.errors",
    "FetchTimeout": "sourcewise.errors",
    "IndexDamaged": "sourcewise.errors",
    "IndexVersionError": "sourcewise.errors",
    "IndexWriteError": "sourcewise.errors",
    "InvalidInput": "sourcewise.errors",
    "InvalidOption": "sourcewise.errors",
    "InvalidQuery": "sourcewise.errors",
    "InvalidURL": "sourcewise.errors",
    "ModelError": "sourcewise.errors",
    "NoProviderAvailable": "sourcewise.errors",
    "ParseError": "sourcewise.errors",
    "ProviderError": "sourcewise.errors",
    "ProviderNotConfigured": "sourcewise.errors",
    "QuotaExceeded": "sourcewise.errors",
    "RateLimited": "sourcewise.errors",
    "RobotsDisallowed": "sourcewise.errors",
    "SourceError": "sourcewise.errors",
    "SourceFormatError": "sourcewise.errors",
    "SourceRateLimited": "sourcewise.errors",
    "SourceStillIndexing": "sourcewise.errors",
    "SourceUnavailable": "sourcewise.errors",
    "SourcewiseError": "sourcewise.errors",
    "StoreUnavailable": "sourcewise.errors",
    "TooManyRedirects": "sourcewise.errors",
    "TransientError": "sourcewise.errors",
    "UnsupportedContent": "sourcewise.errors",
    "Answer": "sourcewise.models",
    "Candidate": "sourcewise.models",
    "Citation": "sourcewise.models",
    "Constraints": "sourcewise.models",
    "Cycle": "sourcewise.models",
    "Factor": "sourcewise.models",
    "FoundBy": "sourcewise.models",
    "Hit": "sourcewise.models",
    "Learned": "sourcewise.models",
    "Page": "sourcewise.models",
    "Passage": "sourcewise.models",
    "Plan": "sourcewise.models",
    "ProviderHit": "sourcewise.models",
    "ProviderStatus": "sourcewise.models",
    "QueryType": "sourcewise.models",
    "RankedHit": "sourcewise.models",
    "Reading": "sourcewise.models",
    "Retrieval": "sourcewise.models",
    "Route": "sourcewise.models",
    "SearchResponse": "sourcewise.models",
    "SearchResult": "sourcewise.models",
    "SourceInfo": "sourcewise.models",
    "SourceQuery": "sourcewise.models",
    "SourceRating": "sourcewise.models",
    "SourceReport": "sourcewise.models",
    "SourceResult": "sourcewise.models",
    "Fetcher": "sourcewise.net.fetch",
    "afetch": "sourcewise.web.pages",
    "fetch": "sourcewise.web.pages",
    "aretrieve": "sourcewise.retrieve",
    "WebContext": "sourcewise.planning.routing",
    "aconditional_web_search": "sourcewise.planning.routing",
    "classify_query": "sourcewise.planning.routing",
    "conditional_web_search": "sourcewise.planning.routing",
    "plan": "sourcewise.planning.routing",
    "route": "sourcewise.planning.routing",
    "Session": "sourcewise.session",
    "Source": "sourcewise.sources",
    "SourceOptions": "sourcewise.sources",
    "KnowledgeBase": "sourcewise.sources.kb.source",
    "IndexReport": "sourcewise.sources.kb.index",
    "asearch_sources": "sourcewise.sources.api",
    "ask": "sourcewise.sources.api",
    "asource_info": "sourcewise.sources.api",
    "retrieve": "sourcewise.sources.api",
    "search_sources": "sourcewise.sources.api",
    "source_info": "sourcewise.sources.api",
}


def __getattr__(name: str) -> Any:
    """Import a public name on first use and keep it in the package namespace."""
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# Public functions named like a submodule of this package: importing the submodule must not
# replace the function (as ``from .sources_api import ask`` after ``from .ask import ...`` did).
_FUNCTIONS_NOT_MODULES = frozenset({"ask", "retrieve"})


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        if name in _FUNCTIONS_NOT_MODULES and isinstance(value, types.ModuleType):
            return  # still in sys.modules; the package attribute stays the public function
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = [
    "TRACKING_PARAMS",
    "AddressNotAllowed",
    "Answer",
    "AuthError",
    "Blocked",
    "Candidate",
    "ChallengePage",
    "Citation",
    "ConfigError",
    "Constraints",
    "Cycle",
    "EmptyContent",
    "Factor",
    "FetchConnectionError",
    "FetchError",
    "FetchHTTPError",
    "FetchTimeout",
    "Fetcher",
    "FoundBy",
    "Hit",
    "IndexDamaged",
    "IndexReport",
    "IndexVersionError",
    "IndexWriteError",
    "InvalidInput",
    "InvalidOption",
    "InvalidQuery",
    "InvalidURL",
    "KnowledgeBase",
    "Learned",
    "ModelError",
    "NoProviderAvailable",
    "Page",
    "ParseError",
    "Passage",
    "Plan",
    "ProviderError",
    "ProviderHit",
    "ProviderNotConfigured",
    "ProviderStatus",
    "QueryType",
    "QuotaExceeded",
    "RankedHit",
    "RateLimited",
    "Reading",
    "Retrieval",
    "RobotsDisallowed",
    "Route",
    "SearchResponse",
    "SearchResult",
    "Session",
    "Settings",
    "Source",
    "SourceError",
    "SourceFormatError",
    "SourceInfo",
    "SourceOptions",
    "SourceQuery",
    "SourceRateLimited",
    "SourceRating",
    "SourceReport",
    "SourceResult",
    "SourceStillIndexing",
    "SourceUnavailable",
    "SourcewiseError",
    "StoreUnavailable",
    "TooManyRedirects",
    "TransientError",
    "UnsupportedContent",
    "WebContext",
    "__version__",
    "aask",
    "aconditional_web_search",
    "afetch",
    "aretrieve",
    "asearch",
    "asearch_sources",
    "ask",
    "asource_info",
    "canonical_url",
    "classify_query",
    "conditional_web_search",
    "extract_urls",
    "fetch",
    "insert_citations",
    "load_settings",
    "plan",
    "provider_status",
    "rate_source",
    "render",
    "retrieve",
    "robots_allowed",
    "route",
    "search",
    "search_sources",
    "source_info",
]
