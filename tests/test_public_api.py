import sourcewise


def test_public_api_is_pinned() -> None:
    assert sorted(sourcewise.__all__) == sorted(
        [
            "TRACKING_PARAMS",
            "AuthError",
            "Blocked",
            "ConfigError",
            "InvalidInput",
            "InvalidOption",
            "InvalidQuery",
            "InvalidURL",
            "NoProviderAvailable",
            "ParseError",
            "ProviderError",
            "ProviderHit",
            "ProviderNotConfigured",
            "ProviderStatus",
            "QuotaExceeded",
            "RateLimited",
            "SearchResponse",
            "SearchResult",
            "Settings",
            "SourceRating",
            "SourcewiseError",
            "TransientError",
            "__version__",
            "asearch",
            "canonical_url",
            "load_settings",
            "provider_status",
            "rate_source",
            "render",
            "search",
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
