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
    │   │   └── SourceStillIndexing   skip    a first index outlasted the deadline (CLI exit 4)
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

import re
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
    "NoNetwork",
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
    "SourceStillIndexing",
    "SourceUnavailable",
    "SourcewiseError",
    "StoreUnavailable",
    "TooManyRedirects",
    "TransientError",
    "UnsupportedContent",
]

Policy = Literal["retry", "suspend", "skip"]

# Scheme, then the authority up to its last "@" (WHATWG: the authority ends at / \ ? or #).
_USERINFO = re.compile(r"^([\x00-\x20]*[A-Za-z][A-Za-z0-9+.-]*:[/\\]*)[^/\\?#]*@")
_USERINFO_IN_TEXT = re.compile(r"(?<=://)[^\s/\\?#@]*@")
REDACT_MAX = 8192  # characters of a URL kept in a message: the most ``web.urlparse.MAX_URL`` accepts


def redact(url: str) -> str:
    """``url`` without its user info (``user:password@``), for messages and logs: every error that
    names a URL passes it through here, so a password in a URL never reaches a message."""
    if not isinstance(url, str):
        return repr(url)
    if "@" not in url:  # both patterns need an "@": nothing to remove
        return url[:REDACT_MAX]
    return _USERINFO_IN_TEXT.sub("", _USERINFO.sub(r"\1", url[:REDACT_MAX]))


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


class _PartError(SourcewiseError):
    """One named part (a web search provider, a private source) failed: ``part`` names it,
    ``detail`` says what happened, ``kind`` sorts it and ``policy`` tells the caller (the engine,
    ``ask``) what to do next."""

    policy: ClassVar[Policy] = "skip"
    kind: ClassVar[str] = "error"

    def __init__(self, part: str, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(f"{part}: {message}")
        self.part = part
        self.detail = message
        self.retry_after = retry_after


class ProviderError(_PartError):
    """A web search provider failed. ``policy`` tells the engine what to do next."""

    @property
    def provider(self) -> str:
        return self.part


class ProviderNotConfigured(ProviderError):
    kind = "not configured"


class NoNetwork(ProviderError):
    """The provider's host could not be reached and this machine has no route to the internet:
    no retry, and the engine skips the other providers that are not self-hosted."""

    kind = "no network"


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

    def __init__(self, attempts: Sequence[tuple[str, str]], *, offline: bool = False) -> None:
        self.attempts = list(attempts)
        self.offline = offline
        if offline:  # the cause first, once: not one line per provider (those are under -v)
            super().__init__(
                "No search provider could answer: no network (no route to the internet), so the web "
                "providers were skipped; -v lists each"
            )
            return
        tried = [(name, why) for name, why in self.attempts if not why.startswith("not configured")]
        if not tried:  # nothing is configured: what each provider in the chain needs, and every way
            needs = "; ".join(f"{name}: {why.removeprefix('not configured ')}" for name, why in self.attempts)
            super().__init__(
                f"No search provider could answer: none is configured ({needs or 'the chain is empty'}). "
                "Ways to configure one: GEMINI_API_KEY, an MCP search server (SOURCEWISE_MCP_COMMAND or "
                "SOURCEWISE_MCP_URL), a logged-in `gemini` CLI on PATH, SEARXNG_URL, BRAVE_API_KEY, "
                "TAVILY_API_KEY or GOOGLE_CSE_KEY + GOOGLE_CSE_ID (`sourcewise keys set NAME` stores a key)"
            )
            return
        unset = len(self.attempts) - len(tried)
        said = "; ".join(f"{name}: {why}" for name, why in tried[:4])  # each short: ``net.reasons``
        more = f" ({unset} more not configured)" if unset else ""
        super().__init__(
            f"No search provider could answer: {said}{more}. Check the network, or configure another "
            "provider (`sourcewise providers` lists them)"
        )


class FetchError(SourcewiseError):
    """A page could not be fetched or read. ``url`` is the page asked for (or the failing hop)."""

    transient: ClassVar[bool] = False

    def __init__(self, url: str, message: str) -> None:
        url, message = redact(url), redact(message)
        super().__init__(f"{message} ({url})")
        self.url = url
        self.detail = message


class AddressNotAllowed(FetchError):
    """The host resolves to an address the fetcher refuses; raised before any connection.

    ``settable``: a private address the ``allow_private`` setting would open (never a metadata
    one); the message then says how. Who can change that setting depends on who reads the message:
    ``LOCAL_FIX`` for the library and the CLI, ``REMOTE_FIX`` for a caller over MCP or HTTP (the
    doors swap one for the other: ``doorsafe.for_remote``), both written here only."""

    LOCAL_FIX: ClassVar[str] = "pass allow_private=True (--allow-private) for intranet use"
    REMOTE_FIX: ClassVar[str] = (
        "a caller cannot lift this; the server's operator can, with allow_private or allow_hosts "
        "in the server's settings"
    )

    def __init__(self, url: str, message: str, *, address: str = "", settable: bool = False) -> None:
        super().__init__(url, f"{message}; {self.LOCAL_FIX}" if settable else message)
        self.address = address


class RobotsDisallowed(FetchError):
    """The site's robots.txt does not let sourcewise fetch this page, or could not be read
    (a server error or no answer counts as a refusal, RFC 9309); the page was not requested."""


class FetchTimeout(FetchError):
    transient = True


class FetchConnectionError(FetchError):
    """The page's host could not be reached. ``transient``: whether a retry may help (not when
    DNS said the name does not exist)."""

    transient = True

    def __init__(self, url: str, message: str, *, transient: bool = True) -> None:
        super().__init__(url, message)
        self.transient = transient  # type: ignore[misc]


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


class SourceError(_PartError):
    """A private source failed. ``policy`` tells ``ask`` what to do next, as for providers."""

    @property
    def source(self) -> str:
        return self.part


class SourceUnavailable(SourceError):
    kind = "unavailable"


class SourceStillIndexing(SourceUnavailable):
    """A source is still building its first index past the search's deadline (``Source.pending``):
    not "nothing found"; the CLI exits 4, a door answers 503. The index goes on being built."""

    kind = "still indexing"


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


class StoreUnavailable(SourcewiseError):
    """Shared state (Redis, ``SOURCEWISE_REDIS_URL``) cannot be reached for something that must
    reach it, such as lifting the suspensions every worker sees: doing it locally would only
    seem to work. The doors answer 503; try again when it answers."""


class ModelError(SourcewiseError):
    """The configured answer model could not be reached or gave no usable answer."""
