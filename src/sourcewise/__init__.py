"""sourcewise: trustworthy, de-duplicated, cited search over the web and private sources."""

from ._version import __version__
from .api import asearch, provider_status, rate_source, search
from .config import Settings, load_settings
from .core.render import render
from .core.urls import TRACKING_PARAMS, canonical_url
from .errors import (
    AuthError,
    Blocked,
    ConfigError,
    InvalidInput,
    InvalidOption,
    InvalidQuery,
    InvalidURL,
    NoProviderAvailable,
    ParseError,
    ProviderError,
    ProviderNotConfigured,
    QuotaExceeded,
    RateLimited,
    SourcewiseError,
    TransientError,
)
from .models import ProviderHit, ProviderStatus, SearchResponse, SearchResult, SourceRating

__all__ = [
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
