"""Source tiers and reliability scores (seed 000), from a curated table plus a few rules.

Tiers and score bands: 1 official docs 90-100, 2 semi-official 70-89, 3 community 50-69,
4 personal blogs and media 30-49. A rating is query-aware: a page scores highest when it is
official for the project the query is about. A tier cannot be bought with a subdomain: a name
like ``docs.`` only strengthens a site that is already known or named by the query, and hosts
where anyone can publish are rated for what they are. Rules, first match wins:

1. the user's ``tiers`` config (host or domain -> tier);
2. a curated table entry for this very host (``esbuild.github.io``, ``requests.readthedocs.io``);
3. redirect links whose final site is unknown (``[redirects]`` in the table: Gemini's unresolved
   ``vertexaisearch.cloud.google.com`` links, ``t.co``, ``google.com/url`` ...): tier 4, rated for
   what the link is, never for the domain it sits on;
4. user-content hosts (``[user_content]`` in the table: Google Docs/Sites/Drive, Notion pages, Gists, GitHub
   Pages, Read the Docs, page hosts ...): tier 4, or 3 for Read the Docs; tier 1 when the
   project slug is the project the query names (``requests.readthedocs.io`` for "requests"), and
   GitHub Pages of an official GitHub organisation (``rust-lang.github.io/async-book``,
   ``facebook.github.io/react-native`` for the repository ``github.com/facebook/react-native``)
   or of one named after a project the query names that the table does not know;
5. the curated table (``data/domains.toml`` plus the user's ``official`` config), most specific
   entry first, so ``kubernetes.io/blog`` (tier 2) beats ``kubernetes.io`` (tier 1) and
   ``github.com/facebook/react`` (tier 1) beats ``github.com`` (tier 3); forum and Q&A paths
   on an official site (``/forums``, ``/answers/questions`` ...) are community, tier 3; on
   ``github.com``, an organisation named after a project the query names that the table does
   not know is that project's (``github.com/zeromq`` for "zeromq"): tier 1;
6. ``docs.*``, ``developer(s).*``, ``learn.*`` subdomains of a site the table knows, or of a
   domain named after a project the query names: tier 1;
7. a ``.org``/``.io``/``.dev`` (``.rs``, ``.sh``, ``.app`` ...) domain named after a project the
   query names and the table does not know (``zeromq.org`` for "zeromq" or "0MQ",
   ``tornadoweb.org`` for "tornado"; ``core.projects`` says what "named after" means): tier 1.
   A project the table knows is official only on the domains listed for it, so ``react.io`` or
   ``react-dev.com`` are no React sites;
8. ``blog.``/``engineering.`` subdomains of a known official domain: tier 2;
9. government and academic domains (``.gov``, ``.edu``, ``.ac.kr``, ``.go.jp`` ...): tier 2;
10. ``forum.``, ``community.``, ``discuss.`` subdomains: tier 3;
11. anything else: tier 4 (a personal blog, or a site nobody has vouched for).

The query names the projects the table knows by name or alias, and (for the rules about projects
the table does not know) any other word that may be a name, whatever its case (``core.projects``).
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
from .projects import PROJECT_SUFFIXES, candidate_words, named_by
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
        self.projects = frozenset(self.names.values())
        # "org" or "org/repo" on github.com -> the project it is an official repository of
        self.github: dict[str, str] = {}
        for entry in self._by_host.get("github.com", ()):
            if entry.tier == 1 and entry.project and entry.source == "table" and entry.path.count("/") <= 2:
                self.github.setdefault(entry.path[1:], entry.project)
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
        for project, said in wanted:
            if project in table.projects and said.replace(" ", "-") in low and _in_path(said, low):
                named = True
                break
    # On GitHub the first segment is the organisation (github.com/ORG, ORG.github.io/REPO)
    owner = low.split("/", 2)[1] if len(low) > 1 and _on_github(host) else None
    key = (table, wanted, host, entries, hosted, low.startswith(_DOC_PATHS), forum, named, owner)
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
    hosted_paths: tuple[str, ...]  # user-content and redirect path prefixes for this host ("/spaces")
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
    for spec in (*user_content(), *redirects()):
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
        named
        if named is not None
        else any(_in_path(said, path) for project, said in wanted.items() if project in table.projects)
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


def redirects() -> dict[str, str]:
    """Hosts (and paths) of links that only redirect elsewhere -> what such a link is."""
    return _builtin()["redirects"]  # type: ignore[return-value]


def _on_github(host: str) -> bool:
    return host == "github.com" or host.endswith(".github.io")


@lru_cache(maxsize=2)
def _specs(section: str) -> dict[str, tuple[tuple[str, str], ...]]:
    """A ``[section]`` of the table by host: host -> (path prefix or "", what), in table order."""
    out: dict[str, list[tuple[str, str]]] = {}
    for spec, what in _builtin()[section].items():
        spec_host, _, spec_path = spec.partition("/")
        out.setdefault(spec_host, []).append(("/" + spec_path if spec_path else "", str(what)))
    return {host: tuple(entries) for host, entries in out.items()}


def _matching(section: str, host: str, path: str) -> tuple[str, str, bool] | None:
    """(the suffix, what it is, whether a path said so) for the first spec of ``[section]`` that
    covers this host and path (a spec is a host suffix with an optional path prefix)."""
    specs = _specs(section)
    labels = host.split(".")
    low = path.lower()
    for i in range(len(labels)):
        suffix = ".".join(labels[i:])
        for prefix, what in specs.get(suffix, ()):
            if not prefix or low.startswith(prefix):
                return suffix, what, bool(prefix)
    return None


def _user_content(host: str, path: str) -> tuple[str, str, bool] | None:
    """(the user-content suffix, what it is, whether a path said so) when anyone can publish
    at this host and path."""
    return _matching("user_content", host, path)


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
    if entry is not None and entry.source == "config":
        return _from_table(table, entry, host, path)
    redirect = _matching("redirects", host, path)
    if redirect is not None:
        return 4, 33, f"{redirect[0]} link: {redirect[1]}; rated as a link, not for its domain", None
    unknown = {p: said for p, said in wanted.items() if p not in table.projects}
    hosted = _user_content(host, path)
    by_path = hosted is not None and hosted[2]  # huggingface.co/spaces beats huggingface.co
    if host == "github.com" and entry is not None and not entry.path and unknown:
        org = path.split("/", 2)[1].lower() if len(path) > 1 else ""
        named = named_by(org, unknown) if org else None
        if named:
            return 1, 90, f"github.com/{org} is the GitHub organisation of {unknown[named]!r}", named
    if entry is not None and entry.host == host and not by_path:
        return _from_table(table, entry, host, path)
    if hosted is not None:
        if host.endswith(".github.io"):
            pages = _github_pages(table, host, path, unknown)
            if pages is not None:
                return pages
        return _hosted(host, hosted, wanted, table.names)
    if entry is not None:
        return _from_table(table, entry, host, path)
    return _by_rules(table, host, unknown)


def _github_pages(
    table: SourceTable, host: str, path: str, unknown: Mapping[str, str]
) -> tuple[Tier, int, str, str | None] | None:
    """GitHub Pages of an official GitHub organisation or repository, or of an organisation
    named after a project the query names that the table does not know; else None."""
    org = host.removesuffix(".github.io")
    repo = path.lower().split("/", 2)[1] if len(path) > 1 else ""
    for where in (f"{org}/{repo}", org):
        project = table.github.get(where)
        if project is not None:
            return 1, 90, f"{host} is the GitHub Pages of github.com/{where}, official for {project}", project
    named = named_by(org, unknown) if "." not in org else None
    if named:
        return 1, 90, f"{host} is the GitHub Pages site of the organisation of {unknown[named]!r}", named
    return None


def _by_rules(table: SourceTable, host: str, unknown: Mapping[str, str]) -> tuple[Tier, int, str, str | None]:
    """Rules 6-11 for a host the table does not list."""
    registrable = psl().privatesuffix(host) or host
    label, _, suffix = registrable.partition(".")
    named = named_by(label, unknown) if unknown else None
    owner = table.project_of(registrable)
    if host.startswith(_DOC_HOSTS) and host != registrable:
        if owner or table.lookup(registrable, "/") is not None:
            return 1, 90, f"{host} is the documentation site of {owner or registrable}", owner
        if named:
            return 1, 90, f"{host} documents {unknown[named]!r}, named in the query", named
    if named and suffix in PROJECT_SUFFIXES and not host.startswith(_BLOG_HOSTS):
        return 1, 90, f"the domain {registrable} is named after {unknown[named]!r} in the query", named
    if host.startswith(_BLOG_HOSTS) and (owner or (named and suffix in PROJECT_SUFFIXES)):
        return 2, 78, f"{host} is an official blog of {owner or unknown[named or '']!r}", owner or named
    public = psl().publicsuffix(host) or ""
    if public in _INSTITUTION or public.split(".")[0] in ("gov", "edu", "ac", "go"):
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
    """Projects the query names: the table's (by name or alias), then every other word that may
    be a project's name (``core.projects.candidate_words``), whatever its case."""
    toks = words(query)
    found = table.projects_in_words(toks)
    taken = {part for said in found.values() for part in said.split()}
    for word in candidate_words(toks):
        if word not in table.names and word not in taken:
            found.setdefault(word, word)
    return found
