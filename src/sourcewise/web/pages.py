"""``fetch`` / ``afetch``: one page's main content, rated, with the passages for a prompt."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, overload

from sourcewise._sync import sync
from sourcewise.config import Settings
from sourcewise.errors import FetchError, InvalidOption, redact
from sourcewise.models import Page
from sourcewise.net.cache import CachedDocument
from sourcewise.text.passages import top_passages
from sourcewise.web.domains import builtin_table
from sourcewise.web.rating import rate
from sourcewise.web.tiers import SourceTable
from sourcewise.web.urls import canonical_url

if TYPE_CHECKING:
    from sourcewise.session import Session

__all__ = ["afetch", "build_page", "fetch"]

log = logging.getLogger("sourcewise")


def build_page(
    doc: CachedDocument,
    requested: str,
    *,
    prompt: str | None,
    start: int,
    max_chars: int,
    from_cache: bool,
    table: SourceTable | None = None,
) -> Page:
    text = doc.extracted.text
    rating = rate(doc.url, prompt, table or builtin_table())
    end = start + max_chars
    return Page(
        url=doc.url,
        requested_url=redact(requested),
        title=doc.extracted.title,
        author=doc.extracted.author,
        published=doc.extracted.published,
        declared_canonical=doc.extracted.canonical,
        content_type=doc.extracted.content_type,
        content=text[start:end],
        start=start,
        next_start=end if end < len(text) else None,
        total_chars=len(text),
        truncated=doc.truncated,
        tier=rating.tier,
        reliability_score=rating.reliability_score,
        reason=rating.reason,
        fetched_at=datetime.fromtimestamp(doc.fetched_at, UTC),
        from_cache=from_cache,
        passages=top_passages(text, prompt) if prompt and prompt.strip() else [],
    )


@overload
async def afetch(
    url: str,
    prompt: str | None = ...,
    *,
    allow_private: bool | None = ...,
    use_cache: bool = ...,
    max_chars: int | None = ...,
    start: int = ...,
    best_effort: Literal[False] = ...,
    session: Session | None = ...,
    settings: Settings | None = ...,
    obey_robots: bool = ...,
) -> Page: ...
@overload
async def afetch(
    url: str,
    prompt: str | None = ...,
    *,
    allow_private: bool | None = ...,
    use_cache: bool = ...,
    max_chars: int | None = ...,
    start: int = ...,
    best_effort: Literal[True],
    session: Session | None = ...,
    settings: Settings | None = ...,
    obey_robots: bool = ...,
) -> Page | None: ...
async def afetch(
    url: str,
    prompt: str | None = None,
    *,
    allow_private: bool | None = None,
    use_cache: bool = True,
    max_chars: int | None = None,
    start: int = 0,
    best_effort: bool = False,
    session: Session | None = None,
    settings: Settings | None = None,
    obey_robots: bool = True,
) -> Page | None:
    """Fetch ``url``: main content as Markdown, title, tier and score, passages for ``prompt``.

    Long pages come in slices of ``max_chars`` from ``start`` (``next_start`` says where the next
    one begins). The site's robots.txt is obeyed (``RobotsDisallowed`` when it refuses) unless
    ``obey_robots=False``, for a page the user named. Errors are typed ``FetchError``s;
    ``best_effort=True`` turns them into ``None`` plus a logged reason (seed 001's graceful
    degradation). ``session``: the one to fetch through (its fetcher, page cache and settings);
    otherwise a short one on ``settings``.
    """
    canonical_url(url)  # InvalidURL before anything else
    if session is None:
        from sourcewise.session import Session

        async with Session(settings) as own:
            return await _afetch(
                own, url, prompt, allow_private, use_cache, max_chars, start, best_effort, obey_robots
            )
    return await _afetch(
        session, url, prompt, allow_private, use_cache, max_chars, start, best_effort, obey_robots
    )


async def _afetch(
    session: Session,
    url: str,
    prompt: str | None,
    allow_private: bool | None,
    use_cache: bool,
    max_chars: int | None,
    start: int,
    best_effort: bool,
    obey_robots: bool,
) -> Page | None:
    settings = session.settings
    if not isinstance(start, int) or start < 0:
        raise InvalidOption(f"start must be 0 or more, got {start!r}")
    size = settings.max_chars if max_chars is None else max_chars
    if not isinstance(size, int) or size < 1:
        raise InvalidOption(f"max_chars must be at least 1, got {max_chars!r}")
    private = settings.allow_private if allow_private is None else allow_private
    try:
        doc, cached = await session.fetcher.document(
            url, allow_private=private, use_cache=use_cache, obey_robots=obey_robots
        )
    except FetchError as exc:
        if best_effort:
            log.warning("⚠️ could not read %s: %s", redact(url), exc.detail)
            return None
        raise
    return build_page(
        doc, url, prompt=prompt, start=start, max_chars=size, from_cache=cached, table=session.table
    )


fetch = sync(afetch)
