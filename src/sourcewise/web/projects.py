"""Which domain labels and GitHub organisations are named after a project a query names.

A query names projects the curated table knows (through their names and aliases, 리액트 included)
and projects it does not ("zeromq sockets", "attrs validators"). For the second kind any word of
the query may be the project: case does not matter (``ZeroMQ`` and ``zeromq`` are one name), and
the usual spellings of a name are the same name: punctuation left out (``socket.io`` is
``socketio``), a leading number spelled out (``0MQ`` and ``ØMQ`` are ``zeromq``); an abbreviation
is a table alias (``zmq``). Words that never name a project (English function words, what a
query asks for: "docs", "tutorial", "how") are left out.

A label is named after a project when it is one of the name's spellings, bare (``zeromq.org``),
with a usual affix glued on (``tornadoweb.org``, ``expressjs.com``, ``getbootstrap.com``), or as
one part of a hyphenated label whose other parts are such affixes (``python-attrs``,
``rust-lang``). Everything here is pure and bounded (inputs are domain labels and query words).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

from sourcewise.text.analyze import STOPWORDS

__all__ = ["PROJECT_SUFFIXES", "candidate_words", "named_by", "spellings"]

#: Public suffixes of a project's own site: a label named after a project that the table does not
#: know is official on these (``zeromq.org``, ``hono.dev``, ``tokio.rs``); ``.com`` and the rest are
#: where look-alikes live, so they need the table or the user's config.
PROJECT_SUFFIXES = frozenset({"org", "io", "dev", "rs", "sh", "app", "build", "run"})
_SUFFIXES = ("js", "web", "lang", "project", "hq", "dev", "org", "io", "py", "rs")
_PREFIXES = ("get", "use")
_PARTS = frozenset({*_SUFFIXES, *_PREFIXES, "python", "go", "team", "labs", "sigs", "contrib", "official"})
# A slashed zero is a zero in names ("ØMQ" is 0MQ, ZeroMQ's own spelling in its guide)
_SLASHED_ZERO = str.maketrans({"ø": "0"})
_DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
# Words that say what is wanted or how, never which project: a site named after one is not the
# project's own ("tutorial.dev" for "zeromq tutorial").
_GENERIC = frozenset(
    (
        "about above after again against all also any api apis app apps async await basic basics best "
        "better beginner beginners build bug bugs case cheat class code compare comparison config "
        "configure configuration create database default define definition demo deploy deployment dev "
        "developer developers difference differences doc docs documentation download easy error errors "
        "example examples explain explained fast faq feature features file files fix free function "
        "functions get getting github good guide guides help hello home install installation intro "
        "introduction issue issues just latest learn library like list make manual more most much need "
        "new news official online open page performance quick quickstart read reference release "
        "releases run sample samples server service set setup should simple site source start started "
        "support test tests tip tips tool tools tutorial tutorials type types update upgrade usage use "
        "used user using version versions via vs web what whats work working world write your"
    ).split()
)


@lru_cache(maxsize=4096)
def spellings(word: str) -> frozenset[str]:
    """The usual spellings of a name, as a domain label would write them (lower case, ASCII)."""
    low = word.lower()
    compact = "".join(c for c in low if c.isalnum())
    if not compact.isascii():
        return frozenset()
    out = {compact}
    if compact[:1].isdigit() and not compact.isdigit():  # "0mq" -> "zeromq"
        out.add(_DIGITS[int(compact[0])] + compact[1:])
    return frozenset(out)


_NAME_MAX = 63  # characters: a project named after a domain label is at most a label long


def candidate_words(words: Iterable[str]) -> list[str]:
    """Query words that may be the name of a project (in order, without repeats)."""
    out: dict[str, None] = {}
    for word in words:
        low = word.lower().strip(".'").translate(_SLASHED_ZERO)
        if not 3 <= len(low) <= _NAME_MAX or not low.isascii() or low.isdigit():
            continue
        if low in STOPWORDS or low in _GENERIC:
            continue
        if not any(c.isalpha() for c in low):
            continue
        out.setdefault(low)
    return list(out)


@lru_cache(maxsize=4096)
def _label_names(label: str) -> frozenset[str]:
    """The names a domain label or GitHub organisation may be named after."""
    label = label.lower()
    out = {label.replace("-", "").replace("_", "")}
    parts = [p for p in label.replace("_", "-").split("-") if p]
    if len(parts) > 1:
        rest = [p for p in parts if p not in _PARTS]
        if len(rest) == 1:  # "python-attrs", "rust-lang": one name among usual affixes
            out.add(rest[0])
    for name in list(out):
        for suffix in _SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix) + 1:
                out.add(name[: -len(suffix)])
        for prefix in _PREFIXES:
            if name.startswith(prefix) and len(name) > len(prefix) + 1:
                out.add(name[len(prefix) :])
    return frozenset(out)


def named_by(label: str, wanted: Mapping[str, str]) -> str | None:
    """The wanted project (``project -> the words that named it``) that ``label`` is named after."""
    names = _label_names(label)
    for project, said in wanted.items():
        if not names.isdisjoint(spellings(project)) or not names.isdisjoint(spellings(said)):
            return project
    return None
