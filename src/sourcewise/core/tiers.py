"""Source tiers and reliability scores (seed 000), from a curated table plus a few rules.

Tiers and score bands: 1 official docs 90-100, 2 semi-official 70-89, 3 community 50-69,
4 personal blogs and media 30-49. A rating is query-aware: a page scores highest when it is
official for the project the query is about. A tier cannot be bought with a subdomain: a name
like ``docs.`` only strengthens a site that is already known or named by the query, and hosts
where anyone can publish are rated for what they are. Rules, first match wins:

1. the user's ``tiers`` config (host or domain -> tier);
2. a curated table entry for this very host (``esbuild.github.io``, ``requests.readthedocs.io``);
3. user-content hosts (``[user_content]`` in the table: Google Docs/Sites/Drive, Notion pages, Gists, GitHub
   Pages, Read the Docs, page hosts ...): tier 4, or 3 for Read the Docs; tier 1 when the
   project slug is the project the query names (``requests.readthedocs.io`` for "requests");
4. the curated table (``data/domains.toml`` plus the user's ``official`` config), most specific
   entry first, so ``kubernetes.io/blog`` (tier 2) beats ``kubernetes.io`` (tier 1) and
   ``github.com/facebook/react`` (tier 1) beats ``github.com`` (tier 3); forum and Q&A paths
   on an official site (``/forums``, ``/answers/questions`` ...) are community, tier 3;
5. ``docs.*``, ``developer(s).*``, ``learn.*`` subdomains of a site the table knows, or of a
   domain named after a project the query names: tier 1;
6. a domain whose name is a project named in the query and missing from the table
   (``brandnewlib.dev`` for "BrandNewLib"): tier 1. A project the table knows is official only
   on the domains listed for it, so ``react.io`` or ``react-dev.com`` are no React sites;
7. ``blog.``/``engineering.`` subdomains of a known official domain: tier 2;
8. government and academic domains (``.gov``, ``.edu``, ``.ac.kr``, ``.go.jp`` ...): tier 2;
9. ``forum.``, ``community.``, ``discuss.`` subdomains: tier 3;
10. anything else: tier 4 (a personal blog, or a site nobody has vouched for).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from ..models import SourceRating, Tier
from .suffixes import psl
from .text import strip_particle, words
from .urls import canonical_url

__all__ = [
    "BANDS",
    "SourceTable",
    "builtin_table",
    "default_table",
    "projects_in",
    "rate",
    "rate_canonical",
    "rate_key",
    "rate_parts",
    "rate_uncached",
    "wanted_projects",
]

BANDS: dict[int, tuple[int, int]] = {1: (90, 100), 2: (70, 89), 3: (50, 69), 4: (30, 49)}
_LABEL = {1: "official", 2: "semi-official", 3: "community", 4: "blog/media"}
_DOC_PATHS = (
    "/docs",
    "/doc",
    "/reference",
    "/api",
    "/manual",
    "/learn",
    "/guide",
    "/tutorial",
    "/library",
    "/documentation",
    "/handbook",
    "/book",
    "/spec",
)
_DOC_HOSTS = ("docs.", "doc.", "developer.", "developers.", "devdocs.", "api-docs.", "learn.")
_COMMUNITY_HOSTS = ("forum.", "forums.", "community.", "discuss.", "discourse.", "answers.")
_BLOG_HOSTS = ("blog.", "blogs.", "engineering.", "tech.", "techblog.", "news.")
_INSTITUTION = (
    "gov",
    "edu",
    "mil",
    "int",
    "ac.kr",
    "go.kr",
    "re.kr",
    "ac.jp",
    "go.jp",
    "gov.uk",
    "ac.uk",
    "edu.au",
    "gov.au",
    "gc.ca",
    "gouv.fr",
    "bund.de",
)
#: Hosts where anyone can publish (``[user_content]`` in ``data/domains.toml``), by host suffix
#: and optional path prefix: what is there is rated for what it is, whoever owns the domain.
_LOCALE = re.compile(r"^/[a-z]{2}(?:[-_][a-z]{2,4})?(?=/)")
_RTD = ("readthedocs.io", "readthedocs.org", "readthedocs-hosted.com")
#: Forum and Q&A paths on an official site: community answers, not the docs.
_COMMUNITY_PATHS = ("/forums", "/forum", "/answers/questions", "/community", "/discussions", "/thread")
# CamelCase or all-caps names of three or more letters: likely a product the query is about.
_NAME = re.compile(r"\b(?:[A-Z]{3,}[a-z]*|[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+|[a-z]+[A-Z]\w*)\b")


@dataclass(frozen=True)
class _Entry:
    host: str
    path: str  # lower-case path prefix without trailing slash, "" for the whole host
    tier: Tier
    score: int
    project: str | None = None
    source: str = "table"


def _split_entry(spec: str) -> tuple[str, str]:
    host, _, path = spec.strip().lower().partition("/")
    host = host.removeprefix("www.")
    return host, ("/" + path.rstrip("/")) if path else ""


class SourceTable:
    """The curated table, indexed by host, plus project names and aliases."""

    def __init__(
        self,
        official: Mapping[str, Iterable[str]],
        aliases: Mapping[str, str],
        scored: Mapping[Tier, Mapping[str, int]],
        overrides: Mapping[str, int] | None = None,
    ) -> None:
        self._by_host: dict[str, list[_Entry]] = {}
        self.names: dict[str, str] = {}  # project name or alias -> project
        for project, specs in official.items():
            name = project.lower()
            self.names[name] = name
            for spec in specs:
                self._add(_Entry(*_split_entry(spec), tier=1, score=90, project=name))
        for alias, project in aliases.items():
            self.names[alias.lower()] = project.lower()
        for tier, table in scored.items():
            low, high = BANDS[tier]
            for spec, score in table.items():
                self._add(_Entry(*_split_entry(spec), tier=tier, score=max(low, min(high, score))))
        for spec, level in (overrides or {}).items():
            host, path = _split_entry(spec)
            mid = sum(BANDS[level]) // 2
            self._add(_Entry(host, path, tier=level, score=mid, source="config"))  # type: ignore[arg-type]
        self._max_words = max((len(n.split()) for n in self.names), default=1)
        # the first words of the names of several words, by number of words
        firsts: dict[int, set[str]] = {}
        for name in self.names:
            parts = name.split()
            if len(parts) > 1:
                firsts.setdefault(len(parts), set()).add(parts[0])
        self._firsts = {size: frozenset(words) for size, words in firsts.items()}

    def _add(self, entry: _Entry) -> None:
        self._by_host.setdefault(entry.host, []).append(entry)

    def lookup(self, host: str, path: str) -> _Entry | None:
        """The most specific entry for host + path: config first, then longest path, then host."""
        path = path.lower().rstrip("/")
        best: tuple[int, int, int] | None = None
        found: _Entry | None = None
        labels = host.split(".")
        for i in range(len(labels)):
            suffix = ".".join(labels[i:])
            for entry in self._by_host.get(suffix, ()):
                if entry.path and not (path == entry.path or path.startswith(entry.path + "/")):
                    continue
                rank = (entry.source == "config", len(entry.path), len(suffix))
                if best is None or rank > best:
                    best, found = rank, entry
        return found

    def project_of(self, host: str) -> str | None:
        """The project whose official site is this host (ignoring paths), if any."""
        labels = host.split(".")
        for i in range(len(labels)):
            for entry in self._by_host.get(".".join(labels[i:]), ()):
                if entry.tier == 1 and entry.project and not entry.path:
                    return entry.project
        return None

    def projects_in(self, query: str) -> dict[str, str]:
        """Projects the query names: project -> the word(s) that named it, in query order."""
        return self.projects_in_words(words(query))

    def projects_in_words(self, toks: Sequence[str]) -> dict[str, str]:
        """``projects_in`` for a query already split by ``text.words``."""
        tokens = [w if w.isascii() else strip_particle(w) for w in toks]  # particles are Hangul
        found: dict[str, str] = {}
        names = self.names
        for size in range(self._max_words, 1, -1):
            firsts = self._firsts.get(size)
            if not firsts or firsts.isdisjoint(tokens):
                continue  # no name of this many words starts with any word here
            for i in range(len(tokens) - size + 1):
                if tokens[i] not in firsts:
                    continue  # no name of this many words starts with this word
                phrase = " ".join(tokens[i : i + size])
                project = names.get(phrase)
                if project and project not in found:
                    found[project] = phrase
        if not names.keys().isdisjoint(tokens):
            for token in tokens:  # names of one word
                project = names.get(token)
                if project and project not in found:
                    found[project] = token
        return found


@lru_cache(maxsize=1)
def _builtin() -> dict[str, dict[str, object]]:
    text = resources.files("sourcewise").joinpath("data/domains.toml").read_text("utf-8")
    return tomllib.loads(text)


def default_table(
    official: Mapping[str, Iterable[str]] | None = None, tiers: Mapping[str, int] | None = None
) -> SourceTable:
    """The built-in table, extended by the user's ``official`` and ``tiers`` config."""
    data = _builtin()
    merged: dict[str, list[str]] = {k: list(v) for k, v in data["official"].items()}  # type: ignore[call-overload]
    for project, specs in (official or {}).items():
        merged.setdefault(project.lower(), []).extend(specs)
    scored: dict[Tier, Mapping[str, int]] = {
        2: data["semi_official"],  # type: ignore[dict-item]
        3: data["community"],  # type: ignore[dict-item]
        4: data["blogs"],  # type: ignore[dict-item]
    }
    return SourceTable(merged, data["aliases"], scored, tiers)  # type: ignore[arg-type]


@lru_cache(maxsize=1)
def builtin_table() -> SourceTable:
    return default_table()


@lru_cache(maxsize=8)
def _table_for_key(key: str) -> SourceTable:
    official, tiers = json.loads(key)
    return default_table(official, tiers)


def table_for(official: Mapping[str, Iterable[str]], tiers: Mapping[str, int]) -> SourceTable:
    """The built-in table extended by this config, built once per distinct config."""
    if not official and not tiers:
        return builtin_table()
    return _table_for_key(json.dumps([official, tiers], sort_keys=True))


def projects_in(query: str, table: SourceTable | None = None) -> dict[str, str]:
    """Projects that ``query`` names (public helper for the planner)."""
    return (table or builtin_table()).projects_in(query)


def rate(url: str, query: str | None = None, table: SourceTable | None = None) -> SourceRating:
    """Rate ``url`` (see the module docstring). Raises ``InvalidURL`` for a non-http(s) URL.

    A rating is a function of the URL as written, the query and the table, so it is kept per
    exact (url, query, table) (bounded, least recently used goes): a URL rated again skips its
    canonicalisation. Errors are not kept; ``rate_uncached`` is the same without the cache.
    """
    table = table or builtin_table()
    if type(url) is not str or (query is not None and type(query) is not str):
        return rate_uncached(url, query, table)  # the general path says what is wrong
    if len(url) + (len(query) if query else 0) > _CACHED_INPUT_MAX:
        return rate_uncached(url, query, table)  # long inputs are not kept: the cache stays small
    key = (url, query, table)
    cache = _BY_URL
    rating = cache.get(key)
    if rating is None:
        rating = rate_uncached(url, query, table)
        _remember(cache, key, rating)
    elif len(cache) > _RATING_CACHE_MAX // 2:
        _touch(cache, key)
    return rating


def rate_uncached(url: str, query: str | None = None, table: SourceTable | None = None) -> SourceRating:
    """``rate`` without the per-URL cache: canonicalise, find the query's projects, rate the key."""
    table = table or builtin_table()
    wanted = wanted_projects(table, query) if query else {}
    return rate_canonical(canonical_url(url), tuple(wanted.items()), table)


def rate_canonical(key: str, wanted: tuple[tuple[str, str], ...], table: SourceTable) -> SourceRating:
    """``rate_key`` for a key that ``canonical_url`` made, through the cache of ``rate_parts``
    (``wanted``: the query's projects as ``tuple(wanted_projects(...).items())``)."""
    slash = key.find("/", 8)  # "https://host/path...": no user info; a port or IPv6 shows a ":"
    host_end = slash if slash >= 0 else len(key)
    path_end = len(key)
    for mark in "?#":
        at = key.find(mark, host_end)
        if 0 <= at < path_end:
            path_end = at
    host = key[8:host_end]
    if not key.startswith("https://") or host.startswith("[") or ":" in host:
        return rate_key(key, dict(wanted), table)  # the general reading
    return rate_parts(host, key[host_end:path_end], wanted, table)


def rate_key(key: str, wanted: Mapping[str, str], table: SourceTable) -> SourceRating:
    """``rate`` for a URL already canonicalised, with the query's projects already found."""
    parts = urlsplit(key)
    return _rate(parts.hostname or "", parts.path, wanted, table, None)


_RATING_CACHE_MAX = 8192
_CACHED_INPUT_MAX = 2048  # characters of URL + query: longer pairs are rated without the cache


def rate_parts(host: str, path: str, wanted: tuple[tuple[str, str], ...], table: SourceTable) -> SourceRating:
    """``rate_key`` for the host and path of a canonical key (``wanted``: the query's projects as
    ``tuple(wanted_projects(...).items())``), cached per host and per set of projects.

    A rating reads little of the path: which of this host's path entries and user-content paths
    it falls under (the table is indexed by first path segment), whether it starts like a
    documentation path, the forum it is in on an official site, and whether a project the
    query names is one of its segments. The cache key is the host and those answers, so that
    pages of one site share one entry, and the cache is bounded (least recently used goes).
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
    if profile.official:
        locale = _LOCALE.match(low)  # anchored: the one match _LOCALE.sub would remove
        unlocalised = low[locale.end() :] if locale else low
        if unlocalised.startswith(_COMMUNITY_PATHS):
            forum = unlocalised.split("/")[1]
    named = False
    if wanted:
        for _, said in wanted:
            if said.replace(" ", "-") in low and _in_path(said, low):
                named = True
                break
    key = (table, wanted, host, entries, hosted, low.startswith(_DOC_PATHS), forum, named)
    cache = _RATINGS
    rating = cache.get(key)
    if rating is None:
        rating = _rate(host, path, dict(wanted), table, named)
        _remember(cache, key, rating)
    elif len(cache) > _RATING_CACHE_MAX // 2:
        _touch(cache, key)
    return rating


def _remember(cache: OrderedDict[Any, SourceRating], key: Any, rating: SourceRating) -> None:
    """Keep ``rating`` in a bounded LRU cache (the least recently used goes past the bound)."""
    cache[key] = rating
    if len(cache) > _RATING_CACHE_MAX:
        with suppress(KeyError):  # another thread may have emptied it meanwhile
            cache.popitem(last=False)


def _touch(cache: OrderedDict[Any, SourceRating], key: Any) -> None:
    """Mark ``key`` as just used; called only once the cache may fill up (order matters then)."""
    with suppress(KeyError):  # another thread may have evicted it meanwhile
        cache.move_to_end(key)


_RATINGS: OrderedDict[tuple[object, ...], SourceRating] = OrderedDict()
_BY_URL: OrderedDict[tuple[str, str | None, SourceTable], SourceRating] = OrderedDict()


class _Profile(NamedTuple):
    """What a rating of this host may read of a path."""

    by_segment: dict[str, tuple[str, ...]]  # first segment -> the path entries under it
    hosted_paths: tuple[str, ...]  # user-content path prefixes for this host ("/spaces")
    official: bool  # a tier-1 entry may apply: its forum paths are community


@lru_cache(maxsize=_RATING_CACHE_MAX)
def _profile(table: SourceTable, host: str) -> _Profile:
    labels = host.split(".")
    suffixes = [".".join(labels[i:]) for i in range(len(labels))]
    by_segment: dict[str, list[str]] = {}
    official = False
    for suffix in suffixes:
        for entry in table._by_host.get(suffix, ()):
            official = official or entry.tier == 1
            if entry.path:
                by_segment.setdefault(entry.path.split("/")[1], []).append(entry.path)
    hosted = []
    for spec in user_content():
        spec_host, _, spec_path = spec.partition("/")
        if spec_path and spec_host in suffixes:
            hosted.append("/" + spec_path)
    return _Profile({k: tuple(v) for k, v in by_segment.items()}, tuple(hosted), official)


def _rate(
    host: str, path: str, wanted: Mapping[str, str], table: SourceTable, named: bool | None
) -> SourceRating:
    """The rating of a canonical key's host and path; ``named``: whether the path names a wanted
    project (None: find out here)."""
    tier, base, why, project = _classify(table, host, path, wanted)
    low, high = BANDS[tier]
    score = base
    notes = [why]
    if project and project in wanted:
        score += {1: 6, 2: 4, 3: 3, 4: 3}[tier]
        notes.append(f"the query is about {project}")
    elif tier >= 3 and (
        named if named is not None else any(_in_path(name, path) for name in wanted.values())
    ):
        score += 3
        notes.append("the path names the project the query is about")
    if tier == 1 and (host.startswith(_DOC_HOSTS) or path.lower().startswith(_DOC_PATHS)):
        score += 2
        notes.append("a documentation page")
    score = max(low, min(high, score))
    return SourceRating(tier=tier, reliability_score=score, reason=f"{_LABEL[tier]}: " + "; ".join(notes))


def _in_path(name: str, path: str) -> bool:
    segments = {s for part in path.lower().split("/") for s in (part, *part.split("-"))}
    return name.replace(" ", "-") in segments


def user_content() -> dict[str, str]:
    """Hosts where anyone can publish -> what is published there."""
    return _builtin()["user_content"]  # type: ignore[return-value]


def _user_content(host: str, path: str) -> tuple[str, str, bool] | None:
    """(the user-content suffix, what it is, whether a path said so) when anyone can publish
    at this host and path."""
    labels = host.split(".")
    for i in range(len(labels)):
        suffix = ".".join(labels[i:])
        for spec, what in user_content().items():
            spec_host, _, spec_path = spec.partition("/")
            if suffix == spec_host and (not spec_path or path.lower().startswith("/" + spec_path)):
                return suffix, what, bool(spec_path)
    return None


def _named(label: str, wanted: Mapping[str, str]) -> str | None:
    """The wanted project whose name is ``label`` (a domain label or a project slug)."""
    for project, said in wanted.items():
        if label in {project.replace(" ", "").replace(".", ""), said.replace(" ", "").replace(".", "")}:
            return project
    return None


def _classify(
    table: SourceTable, host: str, path: str, wanted: Mapping[str, str]
) -> tuple[Tier, int, str, str | None]:
    entry = table.lookup(host, path)
    hosted = _user_content(host, path)
    by_path = hosted is not None and hosted[2]  # huggingface.co/spaces beats huggingface.co
    if entry is not None and (entry.source == "config" or (entry.host == host and not by_path)):
        return _from_table(table, entry, host, path)
    if hosted is not None:
        return _hosted(host, hosted, wanted, table.names)
    if entry is not None:
        return _from_table(table, entry, host, path)
    registrable = psl().privatesuffix(host) or host
    label = registrable.split(".")[0]
    named = _named(label, wanted)
    owner = table.project_of(registrable)
    if host.startswith(_DOC_HOSTS) and host != registrable:
        if owner or table.lookup(registrable, "/") is not None:
            return 1, 90, f"{host} is the documentation site of {owner or registrable}", owner
        if named:
            return 1, 90, f"{host} documents {wanted[named]!r}, named in the query", named
    if named and named not in table.names.values():
        return 1, 90, f"the domain {registrable} is named after {wanted[named]!r} in the query", named
    if owner and host.startswith(_BLOG_HOSTS):
        return 2, 78, f"{host} is an official blog of {owner}", owner
    suffix = psl().publicsuffix(host) or ""
    if suffix in _INSTITUTION or suffix.split(".")[0] in ("gov", "edu", "ac", "go"):
        return 2, 78, f"{host} is a government or academic site", None
    if host.startswith(_COMMUNITY_HOSTS):
        return 3, 55, f"{host} is a community forum", None
    if "blog" in host:
        return 4, 36, f"{host} looks like a personal blog", None
    if host.startswith(_DOC_HOSTS):
        return 4, 33, f"{host} calls itself documentation, but no one has vouched for {registrable}", None
    return 4, 33, f"{host} is not a source the table knows", None


def _from_table(table: SourceTable, entry: _Entry, host: str, path: str) -> tuple[Tier, int, str, str | None]:
    project = entry.project or table.project_of(host)
    where = entry.host + entry.path
    if entry.source == "config":
        return entry.tier, entry.score, f"{where} is set to tier {entry.tier} in your config", project
    if entry.tier == 1:
        unlocalised = _LOCALE.sub("", path.lower())  # "/en-us/answers/..." is "/answers/..."
        if unlocalised.startswith(_COMMUNITY_PATHS):
            forum = "/" + unlocalised.split("/")[1]
            return 3, 60, f"{host}{forum} is a community forum on an official site", project
        return 1, entry.score + 1, f"{where} is an official site of {entry.project}", project
    return entry.tier, entry.score, f"{where} is a known {_LABEL[entry.tier]} source", project


def _hosted(
    host: str, hosted: tuple[str, str, bool], wanted: Mapping[str, str], known: Mapping[str, str]
) -> tuple[Tier, int, str, str | None]:
    suffix, what, _ = hosted
    slug = host[: -len(suffix) - 1] if host != suffix else ""
    if suffix in _RTD:
        named = _named(slug, wanted) if slug else None
        if named and named in known:
            # The table knows this project and its own sites (react.dev, docs.python.org); a Read the
            # Docs project of the same name is not among them, and anyone could have taken the slug.
            said = wanted[named]
            return 3, 55, f"{host} is a Read the Docs project named like {said!r}, not its own site", None
        if named:
            return 1, 90, f"{host} is the Read the Docs site of {wanted[named]!r}, named in the query", named
        return 3, 55, f"{host} is {what}, not known to be the project's own", None
    return 4, 35, f"{host} is {what}: rated for what it is, not for {suffix}", None


def wanted_projects(table: SourceTable, query: str) -> dict[str, str]:
    """Projects the query names: the table's, plus CamelCase or upper-case names (FastAPI, AWS)."""
    found = table.projects_in(query)
    for match in _NAME.finditer(query):
        name = match.group(0).lower()
        if name not in table.names:
            found.setdefault(name, name)
    return found
