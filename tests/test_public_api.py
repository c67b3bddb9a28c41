import sourcewise

# Private sources, ask and their models and errors.
NEW_IN_SOURCES = [
    "Answer",
    "Citation",
    "Factor",
    "Hit",
    "RankedHit",
    "Reading",
    "SourceInfo",
    "SourceReport",
    "SourceResult",
    "Session",
    "Source",
    "SourceOptions",
    "aask",
    "ask",
    "asearch_sources",
    "search_sources",
    "asource_info",
    "source_info",
    "SourceError",
    "SourceUnavailable",
    "StoreUnavailable",
    "SourceFormatError",
    "SourceRateLimited",
    "SourceStillIndexing",
    "IndexVersionError",
    "ModelError",
]
# Iterative retrieval (seed 004).
NEW_IN_RETRIEVE = ["Candidate", "Cycle", "Learned", "Retrieval", "aretrieve", "retrieve"]
# robots.txt (issue 26, item 7).
NEW_IN_ROBOTS = ["RobotsDisallowed", "robots_allowed"]
# Hostile input (issue 29, item 3): a damaged index, a full disk.
NEW_IN_HOSTILE = ["IndexDamaged", "IndexWriteError"]


def test_public_api_is_pinned() -> None:
    assert sorted(sourcewise.__all__) == sorted(
        [
            "TRACKING_PARAMS",
            "AddressNotAllowed",
            "AuthError",
            "Blocked",
            "ChallengePage",
            "ConfigError",
            "Constraints",
            "EmptyContent",
            "FetchConnectionError",
            "FetchError",
            "FetchHTTPError",
            "FetchTimeout",
            "FoundBy",
            "Fetcher",
            "InvalidInput",
            "InvalidOption",
            "InvalidQuery",
            "InvalidURL",
            "IndexReport",
            "KnowledgeBase",
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
            "RateLimited",
            "Route",
            "SearchResponse",
            "SearchResult",
            "Settings",
            "SourceQuery",
            "SourceRating",
            "SourcewiseError",
            "TooManyRedirects",
            "TransientError",
            "UnsupportedContent",
            "WebContext",
            "__version__",
            "aconditional_web_search",
            "afetch",
            "asearch",
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
            "route",
            "search",
            *NEW_IN_SOURCES,
            *NEW_IN_RETRIEVE,
            *NEW_IN_ROBOTS,
            *NEW_IN_HOSTILE,
        ]
    )
    for name in sourcewise.__all__:
        assert hasattr(sourcewise, name), name


def test_errors_form_one_tree() -> None:
    for name in sourcewise.__all__:
        obj = getattr(sourcewise, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, sourcewise.SourcewiseError), name


def test_sync_search_refuses_inside_an_event_loop() -> None:
    import asyncio

    import pytest

    async def inner() -> None:
        with pytest.raises(RuntimeError, match="await"):
            sourcewise.search("react hooks")

    asyncio.run(inner())
