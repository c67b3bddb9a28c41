"""The rules that rate a page: its tier and reliability score (seed 000), from the tier table
(``web.tiers``) plus a few rules, for a canonical key's host and path.

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
   ``tornadoweb.org`` for "tornado"; ``web.projects`` says what "named after" means): tier 1.
   A project the table knows is official only on the domains listed for it, so ``react.io`` or
   ``react-dev.com`` are no React sites. Its forums there (``forum.zeromq.org``,
   ``zeromq.org/forums``) are its community: tier 3;
8. ``blog.``/``engineering.`` subdomains of a known official domain: tier 2;
9. government and academic domains (``.gov``, ``.edu``, ``.ac.kr``, ``.go.jp`` ...): tier 2;
10. ``forum.``, ``community.``, ``discuss.`` subdomains: tier 3;
11. anything else: tier 4 (a personal blog, or a site nobody has vouched for).

The query names the projects the table knows by name or alias, and (for the rules about projects
the table does not know) any other word that may be a name, whatever its case (``web.projects``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from sourcewise.models import SourceRating, Tier
from sourcewise.web.projects import PROJECT_SUFFIXES, named_by
from sourcewise.web.suffixes import psl
from sourcewise.web.tiers import BANDS, Entry, SourceTable

__all__ = ["COMMUNITY_PATHS", "DOC_PATHS", "LOCALE", "in_path", "on_github", "rate_host"]

_LABEL = {1: "official", 2: "semi-official", 3: "community", 4: "blog/media"}
DOC_PATHS = (
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
LOCALE = re.compile(r"^/[a-z]{2}(?:[-_][a-z]{2,4})?(?=/)")
_RTD = ("readthedocs.io", "readthedocs.org", "readthedocs-hosted.com")
#: Forum and Q&A paths on an official site: community answers, not the docs.
COMMUNITY_PATHS = ("/forums", "/forum", "/answers/questions", "/community", "/discussions", "/thread")


def rate_host(
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
        else any(in_path(said, path) for project, said in wanted.items() if project in table.projects)
    ):
        score += 3
        notes.append("the path names the project the query is about")
    if tier == 1 and (host.startswith(_DOC_HOSTS) or path.lower().startswith(DOC_PATHS)):
        score += 2
        notes.append("a documentation page")
    score = max(low, min(high, score))
    # Built from the rules' own values (a tier, a score within its band, a reason): nothing to validate.
    reason = f"{_LABEL[tier]}: " + "; ".join(notes)
    return SourceRating.model_construct(tier=tier, reliability_score=score, reason=reason)


def in_path(name: str, path: str) -> bool:
    segments = {s for part in path.lower().split("/") for s in (part, *part.split("-"))}
    return name.replace(" ", "-") in segments


def on_github(host: str) -> bool:
    return host == "github.com" or host.endswith(".github.io")


def _user_content(table: SourceTable, host: str, path: str) -> tuple[str, str, bool] | None:
    """(the user-content suffix, what it is, whether a path said so) when anyone can publish
    at this host and path."""
    return table.matching("user_content", host, path)


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
    redirect = table.matching("redirects", host, path)
    if redirect is not None:
        return 4, 33, f"{redirect[0]} link: {redirect[1]}; rated as a link, not for its domain", None
    unknown = {p: said for p, said in wanted.items() if p not in table.projects}
    hosted = _user_content(table, host, path)
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
    return _by_rules(table, host, path, unknown)


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


def _by_rules(
    table: SourceTable, host: str, path: str, unknown: Mapping[str, str]
) -> tuple[Tier, int, str, str | None]:
    """Rules 6-11 for a host the table does not list."""
    registrable = psl().privatesuffix(host) or host
    label, _, suffix = registrable.partition(".")
    named = named_by(label, unknown) if unknown else None
    owner = table.project_of(registrable)
    if named and host.startswith(_COMMUNITY_HOSTS):  # forum.zeromq.org: the project's, but its community
        return 3, 60, f"{host} is the community forum of {unknown[named]!r}", named
    if named and LOCALE.sub("", path.lower()).startswith(COMMUNITY_PATHS):
        forum = "/" + LOCALE.sub("", path.lower()).split("/")[1]
        return 3, 60, f"{registrable}{forum} is a community forum on the site of {unknown[named]!r}", named
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


def _from_table(table: SourceTable, entry: Entry, host: str, path: str) -> tuple[Tier, int, str, str | None]:
    project = entry.project or table.project_of(host)
    where = entry.host + entry.path
    if entry.source == "config":
        return entry.tier, entry.score, f"{where} is set to tier {entry.tier} in your config", project
    if entry.tier == 1:
        unlocalised = LOCALE.sub("", path.lower())  # "/en-us/answers/..." is "/answers/..."
        if unlocalised.startswith(COMMUNITY_PATHS):
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
