"""A knowledge-base query from text to hits: its filters (``path:``, ``type:``, ...) and the API's as
one ``StoreFilter``, its words as ``kbterms``' terms (``LexQuery``), the results spread over files
(``diversified``) and built as ``Hit``s."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from functools import lru_cache

from sourcewise.errors import InvalidOption
from sourcewise.models import Hit
from sourcewise.sources.filters import ParsedQuery, parse_query
from sourcewise.sources.kb import terms as kbterms
from sourcewise.sources.kb.embed import read_share
from sourcewise.sources.kb.index import MAX_CHUNKS_PER_FILE
from sourcewise.sources.kb.query import LexQuery, Row, StoreFilter, Viewer
from sourcewise.sources.kb.snippet import snippet as _snippet
from sourcewise.text.analyze import MAX_TERM
from sourcewise.web.rank import _builder

__all__ = [
    "DEMOTED", "DIVERSIFY", "KB_FILTERS", "PER_FILE", "TYPE_EXTS", "Key", "build_filter", "diversified",
    "following", "hit", "kb_query_terms", "lex_query", "parse", "read_shares",
]  # fmt: skip

KB_FILTERS = frozenset({"path", "type", "ext", "title", "after", "before"})
TYPE_EXTS = {
    "markdown": ("md", "markdown", "mdx"), "md": ("md", "markdown", "mdx"), "text": ("txt", "text"),
    "txt": ("txt", "text"), "rst": ("rst",), "html": ("html", "htm"), "htm": ("html", "htm"), "pdf": ("pdf",),
}  # fmt: skip
Key = tuple[int, int]  # a chunk in one view of the index
# Results diversified per file: of the best ``DIVERSIFY`` x limit chunks, a file's first
# ``PER_FILE`` keep their places and its others rank as if they scored ``DEMOTED`` of their score,
# and never all of the list: one long page cannot fill it and push out every other page, yet a
# chunk of it that scores twice another page's stays above that one (the Rust Book's "Mutex is an
# abbreviation for mutual exclusion", its page's 4th chunk at 17.7, fell behind chunks at 7 and below).
DIVERSIFY = 3
PER_FILE = 3
DEMOTED = 0.5


def diversified(view: Viewer, scored: list[tuple[Key, float]], limit: int) -> list[tuple[Row, float]]:
    """The first ``limit`` of ``scored`` (best first) once each file's chunks after its
    ``PER_FILE``-th are ranked at ``DEMOTED`` of their scores (a negative score lowered as much),
    with another file's best chunk in the last place when one file would fill a list longer than
    ``PER_FILE`` (a shorter one is the best file's first chunks, as they rank), with their
    rows and scores: the files come from ``view.files`` (a column), so only the chunks returned are
    read. A chunk whose text an earlier one has (the same page in two folders indexed, a copied
    file) is a copy: it is left out and the next chunk of ``scored`` takes its place (``scored``
    holds ``DIVERSIFY`` x limit, at most ``MAX_LIMIT``: at the largest limits copies can shorten the
    list)."""
    files = view.files([key for key, _ in scored])
    seen: dict[Hashable, int] = {}
    ranks: list[float] = []
    for (_, score), file in zip(scored, files, strict=True):
        seen[file] = seen.get(file, 0) + 1
        ranks.append(score if seen[file] <= PER_FILE else score - abs(score) * (1 - DEMOTED))
    at_rank = sorted(range(len(scored)), key=ranks.__getitem__, reverse=True)  # stable: ties keep their order
    lone = {files[i] for i in at_rank[:limit]}
    other = next((i for i in at_rank[limit:] if files[i] not in lone), None)
    if limit > PER_FILE and len(lone) == 1 and other is not None:
        at_rank.remove(other)
        at_rank.insert(limit - 1, other)
    order = [scored[i] for i in at_rank]
    out: list[tuple[Row, float]] = []
    texts: set[str] = set()
    at = 0
    while len(out) < limit and at < len(order):  # once, unless copies were left out
        batch = order[at : at + limit - len(out)]
        at += len(batch)
        rows = view.rows([key for key, _ in batch])
        for key, score in batch:
            row = rows.get(key)
            if row is not None and row.text not in texts:
                texts.add(row.text)
                out.append((row, score))
    return out


def _day(value: str, key: str, warnings: list[str]) -> str | None:
    try:
        return date.fromisoformat(value.replace("/", "-")).isoformat()
    except ValueError:
        warnings.append(f"kb: {key}:{value} is not a date like 2025-01-15; ignored")
        return None


def build_filter(pairs: Iterable[tuple[str, str, bool]], warnings: list[str]) -> StoreFilter:
    """A ``StoreFilter`` from (key, value, negated) triples of the KB's filter keys."""
    where = StoreFilter()
    for key, value, negated in pairs:
        if key == "path":
            (where.not_paths if negated else where.paths).append(value)
        elif key in ("type", "ext"):
            exts = TYPE_EXTS.get(value.lower().lstrip("."), (value.lower().lstrip("."),))
            (where.not_exts if negated else where.exts).extend(exts)
        elif key == "title":
            (where.not_titles if negated else where.titles).append(value)
        elif key in ("after", "before") and (day := _day(value, key, warnings)):
            if negated:
                warnings.append(f"kb: -{key}: is not supported; use the other of after:/before:")
            elif key == "after":
                where.after = max(where.after or day, day)
            else:
                where.before = min(where.before or day, day)
    return where


def kb_query_terms(text: str) -> list[str]:
    """The query's terms (``kbterms.query_terms``) without the identifier parts that are one
    character or only digits: "python3" keeps "python3" and "python", "w123" keeps "w123", but not
    "w", "3" or "123", which match a large share of all chunks (every "w2", every number) and cost a
    read of their long posting lists. A word standing on its own in the query always stays."""
    terms = kbterms.query_terms(text)
    whole = {first for w in text.split() if (first := _first_term(w[:MAX_TERM]))}
    return [t for t in terms if t in whole or (len(t) > 1 and not t.isdigit())] or terms


@lru_cache(maxsize=65536)
def _first_term(word: str) -> str | None:
    found = kbterms.terms(word)
    return found[0] if found else None


def lex_query(parsed: ParsedQuery, negations: list[str]) -> LexQuery:
    """Required phrases, any of the terms (weighted as ``kbterms.weighted_query_terms`` says), none
    of the negated words, all analyzed by ``kbterms``.

    A phrase is matched by position on the engine's terms; a phrase holding identifiers or Hangul
    (whose extra terms have no positions of their own) requires each of its terms instead."""
    text = " ".join(parsed.terms)
    weights = {t: w for t, w in kbterms.weighted_query_terms(text) if w != 1.0}
    q = LexQuery(terms=kb_query_terms(text), weights=weights)
    for phrase in parsed.phrases:
        engine_text, extras = kbterms.split(phrase)
        words = kbterms.engine_terms(engine_text)
        if extras:
            q.required.extend(dict.fromkeys([*words, *extras]))
        elif words:
            q.phrases.append(words)
    q.excluded = list(dict.fromkeys(t for n in negations for t in kbterms.terms(n)))
    return q


def parse(
    query: str, filters: Mapping[str, str | list[str]] | None, readers: Sequence[str] | None
) -> tuple[ParsedQuery, list[str], StoreFilter, list[str]]:
    """(the parsed query, its negated words, the filter on files, warnings): the query's own filters
    and ``filters`` (a mapping, the API's) in one ``StoreFilter``, kept to ``readers``' files."""
    parsed = parse_query(query)
    warnings = [
        f"kb: filter {f!r} is not supported by kb sources; ignored" for f in parsed.unsupported(KB_FILTERS)
    ]
    pairs = [(k, v, False) for k, v in parsed.filters if k in KB_FILTERS]
    negations: list[str] = []
    for n in parsed.negations:
        key, sep, value = n.partition(":")
        if sep and value and key.lower() in KB_FILTERS:
            pairs.append((key.lower(), value, True))
        else:
            negations.append(n)
    pairs.extend(_filter_pairs(filters))
    where = build_filter(pairs, warnings)
    where.readers = None if readers is None else tuple(readers)  # applied inside the query
    return parsed, negations, where, warnings


def _filter_pairs(filters: Mapping[str, str | list[str]] | None) -> list[tuple[str, str, bool]]:
    if filters is None:
        return []
    if not isinstance(filters, Mapping):
        raise InvalidOption("filters is a mapping like {'ext': 'md', 'after': '2025-01-01'}")
    out: list[tuple[str, str, bool]] = []
    for key, value in filters.items():
        name = str(key).lstrip("-").lower()
        if name not in KB_FILTERS:
            raise InvalidOption(f"unknown kb filter {key!r}; known: {', '.join(sorted(KB_FILTERS))}")
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise InvalidOption(f"kb filter {key!r} takes a string or a list of strings")
        out.extend((name, v, str(key).startswith("-")) for v in values)
    return out


_new_hit = _builder(Hit)


def hit(row: Row, score: float, wanted: kbterms.Wanted, source: str) -> Hit:
    # Built without validation (``rank._builder``, every field given in order): each value is
    # typed here or by the store's ``Row``, the texts cleaned when indexed; validating ten hits
    # cost about a fifth of a query.
    return _new_hit({
        "title": row.title,
        "location": f"{row.path}#L{row.start_line}-L{row.end_line}",
        "snippet": _snippet(row.text, wanted, plain=row.plain),
        "text": row.text,
        "source": source,
        "kind": "knowledge_base",
        "authority": "wiki",
        "score": round(score, 6),
        "author": None,
        # a file without a date of its own is undated: its modification time says when it
        # was copied or checked out, not when it was written (no recency either way)
        "timestamp": _day_start(row.doc_date) if row.dated else None,
        "path": row.path,
        "heading_path": row.heading_path,
        "start_line": row.start_line,
        "end_line": row.end_line,
        "tier": None,
        "reliability_score": None,
        "meta": {},
    })


def read_shares(view: Viewer, scored: Sequence[tuple[Key, float]]) -> dict[Key, float]:
    """Per chunk, about how much of the text it was embedded from the model read: of a PDF
    page's 3,000 characters, the first 1,000 (``embed.read_share``), from the length the index
    keeps (``Viewer.embedded_chars``): the candidates' texts are not read."""
    keys = list(dict.fromkeys(key for key, _ in scored))
    return dict(zip(keys, map(read_share, view.embedded_chars(keys)), strict=True))


def following(view: Viewer, hits: Sequence[Hit]) -> list[Hit]:
    """``hits``, each with the text of the chunk its section goes on in (``meta["after"]``): the kb
    cuts a section into chunks at blank lines, so a sentence's command, value or list is often in
    the next chunk ("... send the `--test-threads` flag. Take a look at the following example:").
    A chunk under another heading is another section: not added. Same file, so the same readers."""
    out = []
    for h in hits:
        row = (
            view.after(h.path, h.end_line, MAX_CHUNKS_PER_FILE) if h.path and h.end_line is not None else None
        )
        if row is not None and row.heading_path == h.heading_path:
            h = h.model_copy(update={"meta": {**h.meta, "after": row.text}})
        out.append(h)
    return out


@lru_cache(maxsize=4096)
def _day_start(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)  # immutable: one object per day is enough
