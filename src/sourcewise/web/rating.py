"""Rating a URL: ``rate`` for a URL as written, ``rate_key`` for a canonical key the merge pipeline
already has. One rule (``web.tierrules.rate_host``) behind one memo: a rating reads little of the
path, so ratings are kept per host and per what the rule reads of the path (see ``_rated``).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from functools import lru_cache
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from sourcewise.models import SourceRating
from sourcewise.web.tierrules import COMMUNITY_PATHS, DOC_PATHS, LOCALE, in_path, on_github, rate_host
from sourcewise.web.tiers import SourceTable, wanted_projects
from sourcewise.web.urls import canonical_url

__all__ = ["rate", "rate_key"]


def rate(url: str, query: str | None, table: SourceTable) -> SourceRating:
    """Rate ``url`` for ``query`` (a page of a project the query names rates higher). Raises
    ``InvalidURL`` for a non-http(s) URL."""
    wanted = tuple(wanted_projects(table, query).items()) if query else ()
    return rate_key(canonical_url(url), wanted, table)


def rate_key(key: str, wanted: tuple[tuple[str, str], ...], table: SourceTable) -> SourceRating:
    """The rating of a key ``canonical_url`` made (``wanted``: the query's projects as
    ``tuple(wanted_projects(table, query).items())``)."""
    parts = _KEY.match(key)
    host, path = parts.groups() if parts else ("", "")
    if host.startswith("[") or ":" in host:  # an IPv6 address or a port: urlsplit reads them
        host = urlsplit(key).hostname or ""
    return _rated(host, path, wanted, table)


_KEY = re.compile(r"https://([^/?#]*)([^?#]*)")  # a canonical key's host and path (no user info)
_RATING_CACHE_MAX = 8192


def _rated(host: str, path: str, wanted: tuple[tuple[str, str], ...], table: SourceTable) -> SourceRating:
    """``rate_host`` through the one memo, kept per host and per set of projects.

    A rating reads little of the path: which of this host's path entries and user-content paths
    it falls under (the table is indexed by first path segment), whether it starts like a
    documentation path, the forum it is in on an official site (or on a site the query's
    project may own), and whether a project the query names is one of its segments. The cache
    key is the host and those answers, so that pages of one site share one entry, and the cache
    is bounded (least recently used goes).
    """
    low = path.lower()
    profile = _profile(table, host)
    entries: tuple[object, ...] = ()
    if profile.by_segment:
        first = low.split("/", 2)[1] if len(low) > 1 else ""
        group = profile.by_segment.get(first)
        if group:
            bare = low.rstrip("/")
            entries = (first, *(bare == p or bare.startswith(p + "/") for p in group))
    hosted = tuple(low.startswith(p) for p in profile.hosted_paths) if profile.hosted_paths else ()
    forum = None
    if profile.official or wanted:  # forums on a known site, or on the site of a project named
        locale = LOCALE.match(low)  # anchored: the one match LOCALE.sub would remove
        unlocalised = low[locale.end() :] if locale else low
        if unlocalised.startswith(COMMUNITY_PATHS):
            forum = unlocalised.split("/")[1]
    named = False
    if wanted:
        for project, said in wanted:
            if project in table.projects and said.replace(" ", "-") in low and in_path(said, low):
                named = True
                break
    # On GitHub the first segment is the organisation (github.com/ORG, ORG.github.io/REPO)
    owner = low.split("/", 2)[1] if profile.github and len(low) > 1 else None
    key = (table, wanted, host, entries, hosted, low.startswith(DOC_PATHS), forum, named, owner)
    cache = _RATINGS
    rating = cache.get(key)
    if rating is None:
        rating = rate_host(host, path, dict(wanted), table, named)
        _remember(cache, key, rating)
    elif len(cache) > _RATING_CACHE_MAX // 2:
        _touch(cache, key)
    return rating


def _remember(cache: OrderedDict[Any, SourceRating], key: Any, rating: SourceRating) -> None:
    """Keep ``rating`` in a bounded LRU cache (the least recently used goes past the bound)."""
    cache[key] = rating
    if len(cache) > _RATING_CACHE_MAX:
        try:  # noqa: SIM105 (suppress() builds an object per call)
            cache.popitem(last=False)
        except KeyError:  # another thread may have emptied it meanwhile
            pass


def _touch(cache: OrderedDict[Any, SourceRating], key: Any) -> None:
    """Mark ``key`` as just used; called only once the cache may fill up (order matters then)."""
    try:  # noqa: SIM105 (suppress() builds an object per call; this runs on every hit once half full)
        cache.move_to_end(key)
    except KeyError:  # another thread may have evicted it meanwhile
        pass


_RATINGS: OrderedDict[tuple[object, ...], SourceRating] = OrderedDict()


class _Profile(NamedTuple):
    """What a rating of this host may read of a path."""

    by_segment: dict[str, tuple[str, ...]]  # first segment -> the path entries under it
    hosted_paths: tuple[str, ...]  # user-content and redirect path prefixes for this host ("/spaces")
    official: bool  # a tier-1 entry may apply: its forum paths are community
    github: bool  # github.com or a GitHub Pages host: the first path segment is the owner


@lru_cache(maxsize=_RATING_CACHE_MAX)
def _profile(table: SourceTable, host: str) -> _Profile:
    labels = host.split(".")
    suffixes = [".".join(labels[i:]) for i in range(len(labels))]
    by_segment: dict[str, list[str]] = {}
    official = False
    for suffix in suffixes:
        bare, under = table.by_segment(suffix)
        official = official or any(e.tier == 1 for e in bare)
        for first, entries in under.items():
            official = official or any(e.tier == 1 for e in entries)
            by_segment.setdefault(first, []).extend(e.path for e in entries)
    hosted = []
    for spec in (*table.user_content, *table.redirects):
        spec_host, _, spec_path = spec.partition("/")
        if spec_path and spec_host in suffixes:
            hosted.append("/" + spec_path)
    return _Profile({k: tuple(v) for k, v in by_segment.items()}, tuple(hosted), official, on_github(host))
