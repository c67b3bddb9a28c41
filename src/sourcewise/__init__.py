"""sourcewise: trustworthy, de-duplicated, cited search over the web and private sources.

Names are imported on first use (PEP 562), so that ``import sourcewise`` and ``sourcewise --help``
stay fast: the HTTP client, pydantic-settings, the page extractors and the rest load when needed.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from .api import asearch, provider_status, rate_source, search
    from .ask import aask
    from .config import Settings, load_settings
    from .core.cite import insert_citations
    from .core.render import render
    from .core.robots import robots_allowed
    from .core.urls import TRACKING_PARAMS, canonical_url
    from .core.weburls import extract_urls
    from .errors import (
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
    from .models import (
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
    from .net.fetch import Fetcher
    from .pages import afetch, fetch
    from .retrieve import aretrieve
    from .routing import (
        WebContext,
        aconditional_web_search,
        classify_query,
        conditional_web_search,
        plan,
        route,
    )
    from .session import Session
    from .sources import Source, SourceOptions
    from .sources.kb import KnowledgeBase
    from .sources.kbindex import IndexReport
    from .sources_api import asearch_sources, ask, asource_info, retrieve, search_sources, source_info

# public name -> the module (relative to this package) that defines it
_WHERE: dict[str, str] = {
    "asearch": ".api",
    "provider_status": ".api",
    "rate_source": ".api",
    "search": ".api",
    "aask": ".ask",
    "Settings": ".config",
    "load_settings": ".config",
    "insert_citations": ".core.cite",
    "render": ".core.render",
    "robots_allowed": ".core.robots",
    "TRACKING_PARAMS": ".core.urls",
    "canonical_url": ".core.urls",
    "extract_urls": ".core.weburls",
    "AddressNotAllowed": ".errors",
    "AuthError": ".errors",
    "Blocked": ".errors",
    "ChallengePage": ".errors",
    "ConfigError": ".errors",
    "EmptyContent": ".errors",
    "FetchConnectionError": ".errors",
    "FetchError": ".errors",
    "FetchHTTPError": ".errors",
    "FetchTimeout": ".errors",
    "IndexDamaged": ".errors",
    "IndexVersionError": ".errors",
    "IndexWriteError": ".errors",
    "InvalidInput": ".errors",
    "InvalidOption": ".errors",
    "InvalidQuery": ".errors",
    "InvalidURL": ".errors",
    "ModelError": ".errors",
    "NoProviderAvailable": ".errors",
    "ParseError": ".errors",
    "ProviderError": ".errors",
    "ProviderNotConfigured": ".errors",
    "QuotaExceeded": ".errors",
    "RateLimited": ".errors",
    "RobotsDisallowed": ".errors",
    "SourceError": ".errors",
    "SourceFormatError": ".errors",
    "SourceRateLimited": ".errors",
    "SourceStillIndexing": ".errors",
    "SourceUnavailable": ".errors",
    "SourcewiseError": ".errors",
    "StoreUnavailable": ".errors",
    "TooManyRedirects": ".errors",
    "TransientError": ".errors",
    "UnsupportedContent": ".errors",
    "Answer": ".models",
    "Candidate": ".models",
    "Citation": ".models",
    "Constraints": ".models",
    "Cycle": ".models",
    "Factor": ".models",
    "FoundBy": ".models",
    "Hit": ".models",
    "Learned": ".models",
    "Page": ".models",
    "Passage": ".models",
    "Plan": ".models",
    "ProviderHit": ".models",
    "ProviderStatus": ".models",
    "QueryType": ".models",
    "RankedHit": ".models",
    "Reading": ".models",
    "Retrieval": ".models",
    "Route": ".models",
    "SearchResponse": ".models",
    "SearchResult": ".models",
    "SourceInfo": ".models",
    "SourceQuery": ".models",
    "SourceRating": ".models",
    "SourceReport": ".models",
    "SourceResult": ".models",
    "Fetcher": ".net.fetch",
    "afetch": ".pages",
    "fetch": ".pages",
    "aretrieve": ".retrieve",
    "WebContext": ".routing",
    "aconditional_web_search": ".routing",
    "classify_query": ".routing",
    "conditional_web_search": ".routing",
    "plan": ".routing",
    "route": ".routing",
    "Session": ".session",
    "Source": ".sources",
    "SourceOptions": ".sources",
    "KnowledgeBase": ".sources.kb",
    "IndexReport": ".sources.kbindex",
    "asearch_sources": ".sources_api",
    "ask": ".sources_api",
    "asource_info": ".sources_api",
    "retrieve": ".sources_api",
    "search_sources": ".sources_api",
    "source_info": ".sources_api",
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
