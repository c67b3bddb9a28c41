"""Every error sourcewise raises, in one tree.

::

    SourcewiseError
    ├── InvalidInput (also ValueError)        bad arguments: fix the call
    │   ├── InvalidQuery                      query too short, or not text
    │   ├── InvalidURL                        not an absolute http(s) URL
    │   └── InvalidOption                     tier, max_results, strategy, format ...
    ├── ConfigError                           unreadable or invalid config file / environment
    ├── ProviderError                         one web search provider failed; ``policy`` says what next
    │   ├── ProviderNotConfigured   skip      no key / URL for it
    │   ├── RateLimited             suspend   HTTP 429 and friends
    │   ├── Blocked                 suspend   bot challenge, CAPTCHA
    │   ├── QuotaExceeded           skip      plan quota used up
    │   ├── AuthError               skip      key refused
    │   ├── TransientError          retry     timeout, connection error, 5xx
    │   └── ParseError              skip      the answer did not look like results
    ├── NoProviderAvailable                   every provider in the chain failed or was skipped
    ├── SourceError                           a private source failed; ``policy`` as for providers
    │   ├── SourceUnavailable       skip      missing path, not indexed, not configured
    │   ├── SourceFormatError       skip      a file or export of the wrong shape
    │   ├── SourceRateLimited       suspend   the source asked us to slow down
    │   ├── IndexVersionError       skip      an index written by a newer sourcewise
    │   │   └── IndexDamaged        skip      a damaged index file (the fix: ``index --rebuild``)
    │   └── IndexWriteError         skip      an index run could not write (full disk ...); the
    │                                         previous index is kept
    ├── ModelError                            the answer model failed or answered garbage (ask
    │                                         falls back to the extractive answer)
    └── FetchError                            a page could not be fetched or read
        ├── AddressNotAllowed                 private, loopback or metadata address (nothing sent)
        ├── RobotsDisallowed                  the site's robots.txt refuses us (page not requested)
        ├── FetchTimeout                      no answer within the timeout
        ├── FetchConnectionError              connection refused, reset, DNS failure
        ├── FetchHTTPError                    4xx / 5xx (``status``, ``retry_after``)
        ├── TooManyRedirects                  more redirects than allowed
        ├── ChallengePage                     a bot challenge or CAPTCHA instead of the page
        ├── UnsupportedContent                not text, HTML, JSON or PDF
        └── EmptyContent                      the page has no readable text

Messages say what happened and what to do about it. Secrets never appear in them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Literal

__all__ = [
    "AddressNotAllowed",
    "AuthError",
    "Blocked",
    "ChallengePage",
    "ConfigError",
    "EmptyContent",
    "FetchConnectionError",
    "FetchError",
    "FetchHTTPError",
    "FetchTimeout",
    "IndexDamaged",
    "IndexVersionError",
    "IndexWriteError",
    "InvalidInput",
    "InvalidOption",
    "InvalidQuery",
    "InvalidURL",
    "ModelError",
    "NoProviderAvailable",
    "ParseError",
    "ProviderError",
    "ProviderNotConfigured",
    "QuotaExceeded",
    "RateLimited",
    "RobotsDisallowed",
    "SourceError",
    "SourceFormatError",
    "SourceRateLimited",
    "SourceUnavailable",
    "SourcewiseError",
    "TooManyRedirects",
    "TransientError",
    "UnsupportedContent",
]

Policy = Literal["retry", "suspend", "skip"]


class SourcewiseError(Exception):
    """Base of every error raised by sourcewise."""


class InvalidInput(SourcewiseError, ValueError):
    """An argument is not acceptable; the message says which and why."""


class InvalidQuery(InvalidInput):
    """The search query is empty, too short or not text."""


class InvalidURL(InvalidInput):
    """The URL is not an absolute http(s) URL that can be parsed."""


class InvalidOption(InvalidInput):
    """An option (tier, max_results, strategy, output format ...) is out of range."""


class ConfigError(SourcewiseError):
    """The configuration file or environment could not be read or is invalid."""


class ProviderError(SourcewiseError):
    """A web search provider failed. ``policy`` tells the engine what to do next."""

    policy: ClassVar[Policy] = "skip"
    kind: ClassVar[str] = "error"

    def __init__(self, provider: str, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(f"{provider}: {message}")
        self.provider = provider
        self.detail = message
        self.retry_after = retry_after


class ProviderNotConfigured(ProviderError):
    kind = "not configured"


class RateLimited(ProviderError):
    policy = "suspend"
    kind = "rate limited"


class Blocked(ProviderError):
    policy = "suspend"
    kind = "blocked"


class QuotaExceeded(ProviderError):
    kind = "quota exceeded"


class AuthError(ProviderError):
    kind = "auth failed"


class TransientError(ProviderError):
    policy = "retry"
    kind = "transient"


class ParseError(ProviderError):
    kind = "unparseable response"


class NoProviderAvailable(SourcewiseError):
    """No provider in the chain answered. ``attempts`` lists what was tried and why it failed."""

    def __init__(self, attempts: Sequence[tuple[str, str]]) -> None:
        self.attempts = list(attempts)
        if self.attempts:
            tried = "; ".join(f"{name}: {why}" for name, why in self.attempts)
        else:
            tried = "no providers in the chain"
        super().__init__(
            f"No search provider could answer. Tried: {tried}. "
            "Check your network, or configure another provider: GEMINI_API_KEY, an MCP search "
            "server (SOURCEWISE_MCP_COMMAND or SOURCEWISE_MCP_URL), a logged-in `gemini` CLI on "
            "PATH, SEARXNG_URL, BRAVE_API_KEY, TAVILY_API_KEY or GOOGLE_CSE_KEY + GOOGLE_CSE_ID; "
            "`sourcewise providers` shows their state."
        )


class FetchError(SourcewiseError):
    """A page could not be fetched or read. ``url`` is the page asked for (or the failing hop)."""

    transient: ClassVar[bool] = False

    def __init__(self, url: str, message: str) -> None:
        from .core.urls import redact  # local: errors is a leaf module

        url, message = redact(url), redact(message)
        super().__init__(f"{message} ({url})")
        self.url = url
        self.detail = message


class AddressNotAllowed(FetchError):
    """The host resolves to an address the fetcher refuses; raised before any connection."""

    def __init__(self, url: str, message: str, *, address: str = "") -> None:
        super().__init__(url, message)
        self.address = address


class RobotsDisallowed(FetchError):
    """The site's robots.txt does not let sourcewise fetch this page, or could not be read
    (a server error or no answer counts as a refusal, RFC 9309); the page was not requested."""


class FetchTimeout(FetchError):
    transient = True


class FetchConnectionError(FetchError):
    transient = True


class FetchHTTPError(FetchError):
    def __init__(self, url: str, status: int, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(url, message)
        self.status = status
        self.retry_after = retry_after
        self.transient = status in (502, 503, 504)  # type: ignore[misc]


class TooManyRedirects(FetchError):
    pass


class ChallengePage(FetchError):
    pass


class UnsupportedContent(FetchError):
    pass


class EmptyContent(FetchError):
    pass


class SourceError(SourcewiseError):
    """A private source failed. ``policy`` tells ``ask`` what to do next, as for providers."""

    policy: ClassVar[Policy] = "skip"
    kind: ClassVar[str] = "error"

    def __init__(self, source: str, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.detail = message
        self.retry_after = retry_after


class SourceUnavailable(SourceError):
    kind = "unavailable"


class SourceFormatError(SourceError):
    kind = "bad format"


class SourceRateLimited(SourceError):
    policy = "suspend"
    kind = "rate limited"


class IndexVersionError(SourceError):
    kind = "newer index"


class IndexDamaged(SourceFormatError):
    """An index file is damaged (truncated, overwritten): the message says how to rebuild it."""

    kind = "damaged index"


class IndexWriteError(SourceError):
    """An index run could not write (a full disk, a file-size limit, a read-only folder). The
    files committed before stay: the previous index keeps answering."""

    kind = "index not written"


class ModelError(SourcewiseError):
    """The configured answer model could not be reached or gave no usable answer."""
