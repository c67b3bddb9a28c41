"""sourcewise: trustworthy, de-duplicated, cited search over the web and private sources.

Names are imported on first use (PEP 562), so that ``import sourcewise`` and ``sourcewise --help``
stay fast: the HTTP client, pydantic-settings, the page extractors and the rest load when needed.

**The public surface is one list**: the imports under ``if TYPE_CHECKING:`` below. Type checkers
and editors read them (``X as X``: an explicit re-export); at run time, the first use of a public
name reads the same statements (``_table``) to learn which module defines it, and ``__all__`` is
that list's names. Adding a public name is adding one import line there.
"""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING, Any

from sourcewise._version import __version__ as __version__

if TYPE_CHECKING:  # the public names, and where each is defined (the one list: see above)
    from sourcewise.loops.ask import aask as aask
    from sourcewise.config import Settings as Settings, load_settings as load_settings
    from sourcewise.doors.render import render as render
    from sourcewise.errors import (
        AddressNotAllowed as AddressNotAllowed,
        AuthError as AuthError,
        Blocked as Blocked,
        ChallengePage as ChallengePage,
        ConfigError as ConfigError,
        EmptyContent as EmptyContent,
        FetchConnectionError as FetchConnectionError,
        FetchError as FetchError,
        FetchHTTPError as FetchHTTPError,
        FetchTimeout as FetchTimeout,
        IndexDamaged as IndexDamaged,
        IndexVersionError as IndexVersionError,
        IndexWriteError as IndexWriteError,
        InvalidInput as InvalidInput,
        InvalidOption as InvalidOption,
        InvalidQuery as InvalidQuery,
        InvalidURL as InvalidURL,
        ModelError as ModelError,
        NoProviderAvailable as NoProviderAvailable,
        ParseError as ParseError,
        ProviderError as ProviderError,
        ProviderNotConfigured as ProviderNotConfigured,
        QuotaExceeded as QuotaExceeded,
        RateLimited as RateLimited,
        RobotsDisallowed as RobotsDisallowed,
        SourceError as SourceError,
        SourceFormatError as SourceFormatError,
        SourceRateLimited as SourceRateLimited,
        SourceStillIndexing as SourceStillIndexing,
        SourceUnavailable as SourceUnavailable,
        SourcewiseError as SourcewiseError,
        StoreUnavailable as StoreUnavailable,
        TooManyRedirects as TooManyRedirects,
        TransientError as TransientError,
        UnsupportedContent as UnsupportedContent,
    )
    from sourcewise.models import (
        Answer as Answer,
        Candidate as Candidate,
        Citation as Citation,
        Constraints as Constraints,
        Cycle as Cycle,
        Factor as Factor,
        FoundBy as FoundBy,
        Hit as Hit,
        Learned as Learned,
        Page as Page,
        Passage as Passage,
        Plan as Plan,
        ProviderHit as ProviderHit,
        ProviderStatus as ProviderStatus,
        QueryType as QueryType,
        RankedHit as RankedHit,
        Reading as Reading,
        Retrieval as Retrieval,
        Route as Route,
        SearchResponse as SearchResponse,
        SearchResult as SearchResult,
        SourceInfo as SourceInfo,
        SourceQuery as SourceQuery,
        SourceRating as SourceRating,
        SourceReport as SourceReport,
        SourceResult as SourceResult,
    )
    from sourcewise.net.fetch import Fetcher as Fetcher
    from sourcewise.planning.routing import (
        WebContext as WebContext,
        aconditional_web_search as aconditional_web_search,
        classify_query as classify_query,
        conditional_web_search as conditional_web_search,
        plan as plan,
        route as route,
    )
    from sourcewise.loops.retrieve import aretrieve as aretrieve
    from sourcewise.session import Session as Session
    from sourcewise.sources import Source as Source, SourceOptions as SourceOptions
    from sourcewise.sources.api import (
        asearch_sources as asearch_sources,
        ask as ask,
        asource_info as asource_info,
        retrieve as retrieve,
        search_sources as search_sources,
        source_info as source_info,
    )
    from sourcewise.sources.kb.index import IndexReport as IndexReport
    from sourcewise.sources.kb.source import KnowledgeBase as KnowledgeBase
    from sourcewise.web.api import (
        asearch as asearch,
        insert_citations as insert_citations,
        provider_status as provider_status,
        rate_source as rate_source,
        search as search,
    )
    from sourcewise.web.pages import afetch as afetch, fetch as fetch
    from sourcewise.web.robots import robots_allowed as robots_allowed
    from sourcewise.web.urls import TRACKING_PARAMS as TRACKING_PARAMS, canonical_url as canonical_url
    from sourcewise.web.weburls import extract_urls as extract_urls


@functools.cache
def _table() -> dict[str, str]:
    """Public name -> the module that defines it, read from the ``if TYPE_CHECKING:`` imports of
    this file (parsed once, on the first use of a public name; ``import sourcewise`` stays cheap)."""
    import ast

    # The loader's copy of this file: a zip import reads it from the archive too.
    loader = __spec__.loader if __spec__ is not None else None
    source = getattr(loader, "get_source", lambda _name: None)(__name__)
    if source is None:
        raise ImportError("sourcewise was installed without its source (__init__.py): reinstall it")
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return {
                alias.asname or alias.name: statement.module
                for statement in node.body
                if isinstance(statement, ast.ImportFrom) and statement.module
                for alias in statement.names
            }
    raise ImportError("sourcewise/__init__.py has lost its `if TYPE_CHECKING:` list of public names")


def __getattr__(name: str) -> Any:
    """Import a public name on first use and keep it in the package namespace."""
    if name == "__all__":
        return sorted([*_table(), "__version__"])
    where = _table().get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_table()})
