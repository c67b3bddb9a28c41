"""Grounded citations: ``[n]`` markers at the UTF-8 byte offsets a grounded answer gives (seed 002).

Gemini's ``groundingSupports`` say where each supported segment ends as a UTF-8 *byte* offset into
the answer, and which ``groundingChunks`` (sources) support it. Python strings are indexed by code
point, so the offsets are converted before anything is inserted. Recorded answers show that the
offsets sometimes drift (by 2 bytes in 7 of 36 supports), so each slice is checked against the
segment's own text and, when it does not match, the text is searched for instead (the occurrence
nearest the given offset, since a sentence can repeat). Pure: no I/O, no clock.

Limits: at most ``MAX_TEXT_CHARS`` characters of text, ``MAX_SUPPORTS`` supports and
``MAX_CHUNKS`` chunks; more is ``InvalidInput``. Searching for drifted text reads at most about
``SEARCH_BUDGET`` characters in all; supports past it keep their offsets (with a note), so citing
takes time linear in the input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from sourcewise.errors import InvalidInput
from sourcewise.text.words import printable

__all__ = [
    "MAX_CHUNKS",
    "MAX_SUPPORTS",
    "MAX_TEXT_CHARS",
    "SEARCH_BUDGET",
    "Cited",
    "Placement",
    "Source",
    "byte_to_char",
    "char_to_byte",
    "chars_for_bytes",
    "cite",
    "sources_block",
]

MAX_TEXT_CHARS = 1_000_000
MAX_SUPPORTS = 10_000
MAX_CHUNKS = 1_000
# Characters that searching for drifted segments may read in all (a search that finds its text
# near the offset reads little): a hostile 1 MB answer with 10k segments that are not in it stops
# after about 100 searches, and the rest keep their offsets.
SEARCH_BUDGET = 100_000_000


class Source(NamedTuple):
    """One grounding chunk as it appears in the sources list: ``[number] title (url)``."""

    number: int
    title: str
    url: str


class Placement(NamedTuple):
    """Where one support's markers went. ``how``: the offset held, or the text was searched for."""

    support: int
    char_offset: int
    byte_offset: int
    numbers: tuple[int, ...]
    how: Literal["offset", "found", "unchecked"]


@dataclass(frozen=True)
class Cited:
    """The cited answer, what was placed where, and why anything was left out."""

    text: str
    body: str
    placements: tuple[Placement, ...]
    sources: tuple[Source, ...]
    notes: tuple[str, ...]


# -- UTF-8 byte offsets <-> str offsets ------------------------------------------------------------
def _encode(text: str) -> bytes:
    # Lone surrogates (possible in JSON) encode to 3 bytes, as JavaScript's U+FFFD would.
    return text.encode("utf-8", "surrogatepass")


def _boundary(data: bytes, offset: int) -> int:
    """``offset`` moved forward to the next character boundary (never inside a character)."""
    while offset < len(data) and 0x80 <= data[offset] < 0xC0:
        offset += 1
    return offset


def chars_for_bytes(text: str, offsets: Iterable[int], data: bytes | None = None) -> dict[int, int]:
    """Map each UTF-8 byte offset into ``text`` to a str offset, in one pass over the text.

    An offset inside a multi-byte character counts as the end of that character. Offsets
    outside ``0..len(bytes)`` are left out of the result. ``data`` is ``text`` already encoded.
    """
    data = _encode(text) if data is None else data
    wanted = sorted({o for o in offsets if 0 <= o <= len(data)})
    if len(data) == len(text):  # ASCII: bytes and characters are the same
        return {o: o for o in wanted}
    out: dict[int, int] = {}
    done_bytes = done_chars = 0
    for offset in wanted:
        end = _boundary(data, offset)
        done_chars += len(data[done_bytes:end].decode("utf-8", "surrogatepass"))
        done_bytes = end
        out[offset] = done_chars
    return out


def _bytes_for_chars(text: str, data: bytes, offsets: Iterable[int]) -> dict[int, int]:
    """Map str offsets (``0..len(text)``) to UTF-8 byte offsets in one pass over the text."""
    wanted = sorted(set(offsets))
    if len(data) == len(text):
        return {o: o for o in wanted}
    out: dict[int, int] = {}
    done_chars = done_bytes = 0
    for offset in wanted:
        done_bytes += len(_encode(text[done_chars:offset]))
        done_chars = offset
        out[offset] = done_bytes
    return out


def byte_to_char(text: str, offset: int) -> int:
    """The str offset for a UTF-8 byte offset (inside a character: the end of that character)."""
    if not isinstance(text, str) or isinstance(offset, bool) or not isinstance(offset, int):
        raise InvalidInput("byte_to_char needs a str and an int offset")
    found = chars_for_bytes(text, [offset])
    if offset not in found:
        raise InvalidInput(f"byte offset {offset} is outside the text (0..{len(_encode(text))})")
    return found[offset]


def char_to_byte(text: str, offset: int) -> int:
    """The UTF-8 byte offset for a str offset."""
    if not isinstance(text, str) or isinstance(offset, bool) or not isinstance(offset, int):
        raise InvalidInput("char_to_byte needs a str and an int offset")
    if not 0 <= offset <= len(text):
        raise InvalidInput(f"character offset {offset} is outside the text (0..{len(text)})")
    return len(_encode(text[:offset]))


# -- reading the metadata -------------------------------------------------------------------------
def _is_map(obj: Any) -> bool:
    # dict first: the ABC check behind Mapping costs more than the rest of the work here.
    return isinstance(obj, (dict, Mapping))


def _get(obj: Any, camel: str, snake: str) -> Any:
    """A field in either spelling: the REST API's camelCase or the Python SDK's snake_case."""
    if not _is_map(obj):
        return None
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def _clean(value: Any, fallback: str) -> str:
    text = printable(value, one_line=True).strip() if isinstance(value, str) else ""
    return text or fallback


def _sources(chunks: Sequence[Any]) -> tuple[Source, ...]:
    out = []
    for number, chunk in enumerate(chunks, start=1):
        origin = None
        if _is_map(chunk):
            origin = chunk.get("web") or _get(chunk, "retrievedContext", "retrieved_context")
        out.append(
            Source(
                number,
                _clean(_get(origin, "title", "title"), "Untitled"),
                _clean(_get(origin, "uri", "uri"), "No URI"),
            )
        )
    return tuple(out)


def sources_block(sources: Sequence[Source]) -> str:
    """``Sources:`` and one ``[n] title (url)`` line per source, as gemini-cli writes them."""
    return "Sources:\n" + "\n".join(f"[{s.number}] {s.title} ({s.url})" for s in sources)


def _list(value: Any, what: str, limit: int) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise InvalidInput(f"{what} must be a list, got {type(value).__name__}")
    if len(value) > limit:
        raise InvalidInput(f"{what} has {len(value)} entries; at most {limit} are accepted")
    return list(value)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _Support(NamedTuple):
    at: int
    end: int | None
    text: str | None
    numbers: tuple[int, ...]


def _supports(raw: list[Any], n_chunks: int, notes: list[str]) -> list[_Support]:
    out = []
    for i, support in enumerate(raw):
        segment = _get(support, "segment", "segment")
        indices = _get(support, "groundingChunkIndices", "grounding_chunk_indices")
        if not _is_map(segment) or not isinstance(indices, list | tuple):
            notes.append(f"support {i}: no segment or no chunk indices; ignored")
            continue
        valid = sorted({n for n in map(_int, indices) if n is not None and 0 <= n < n_chunks})
        if len(valid) < len(indices):
            notes.append(f"support {i}: chunk indices {list(indices)!r} point past the {n_chunks} chunks")
        if not valid:
            notes.append(f"support {i}: no chunk it points at exists; ignored")
            continue
        text = _get(segment, "text", "text")
        out.append(
            _Support(
                i,
                _int(_get(segment, "endIndex", "end_index")),
                text if isinstance(text, str) and text else None,
                tuple(n + 1 for n in valid),
            )
        )
    return out


# -- placing markers ------------------------------------------------------------------------------
def _nearest(text: str, needle: str, target: int) -> tuple[int | None, int]:
    """The end (str offset) of the occurrence of ``needle`` whose end is nearest ``target``, and
    how many characters the search read.

    Two searches in C, whatever the number of occurrences: the last occurrence ending at or
    before ``target`` and the first ending after it. On a tie the earlier one wins.
    """
    size = len(needle)
    target = min(max(target, 0), len(text))
    start = text.rfind(needle, 0, target)
    before = start + size if start != -1 else None
    read = target - max(start, 0)
    start = text.find(needle, max(0, target - size + 1))
    after = start + size if start != -1 else None
    read += (after if after is not None else len(text)) - target + size
    if before is None or (after is not None and after - target < target - before):
        return after, read
    return before, read


def _place(
    text: str, data: bytes, support: _Support, chars: Mapping[int, int], notes: list[str], budget: list[int]
) -> Placement | None:
    end, segment = support.end, support.text
    in_range = end is not None and 0 <= end <= len(data)
    if segment is not None:
        wanted = _encode(segment)
        if in_range and end is not None and end >= len(wanted) and data[end - len(wanted) : end] == wanted:
            return Placement(support.at, chars[end], end, support.numbers, "offset")
        target = chars[end] if in_range and end is not None else len(text)
        found = None
        if budget[0] > 0:
            found, read = _nearest(text, segment, target)
            budget[0] -= read
        elif not budget[1]:
            budget[1] = 1
            notes.append(f"support {support.at}: too many segments to search for; the rest keep offsets")
        if found is not None:  # byte offsets of found and unchecked places: one pass, in cite()
            return Placement(support.at, found, -1, support.numbers, "found")
    if in_range and end is not None:
        if segment is not None:
            notes.append(f"support {support.at}: its text is not in the answer; placed at its offset")
        return Placement(support.at, chars[end], -1, support.numbers, "unchecked")
    notes.append(f"support {support.at}: end offset {end!r} is outside the answer; ignored")
    return None


def cite(text: str, grounding_metadata: Mapping[str, Any] | None) -> Cited:
    """Place ``[n]`` markers and build the sources list; every decision is in the result."""
    if not isinstance(text, str):
        raise InvalidInput(f"the answer text must be a str, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidInput(
            f"the answer text has {len(text)} characters; at most {MAX_TEXT_CHARS} are accepted"
        )
    if grounding_metadata is not None and not isinstance(grounding_metadata, Mapping):
        raise InvalidInput(f"grounding_metadata must be a mapping, got {type(grounding_metadata).__name__}")
    meta = grounding_metadata or {}
    chunks = _list(_get(meta, "groundingChunks", "grounding_chunks"), "groundingChunks", MAX_CHUNKS)
    raw = _list(_get(meta, "groundingSupports", "grounding_supports"), "groundingSupports", MAX_SUPPORTS)
    notes: list[str] = []
    supports = _supports(raw, len(chunks), notes)
    data = _encode(text)
    chars = chars_for_bytes(text, (s.end for s in supports if s.end is not None), data)
    budget = [SEARCH_BUDGET, 0]  # characters left to read; whether the note was written
    placed = [p for s in supports if (p := _place(text, data, s, chars, notes, budget)) is not None]
    to_bytes = _bytes_for_chars(text, data, (p.char_offset for p in placed if p.byte_offset < 0))
    placed = [p if p.byte_offset >= 0 else p._replace(byte_offset=to_bytes[p.char_offset]) for p in placed]
    body = _insert(text, placed)
    sources = _sources(chunks)
    full = f"{body}\n\n{sources_block(sources)}" if sources else body
    return Cited(full, body, tuple(placed), sources, tuple(notes))


def _insert(text: str, placed: Sequence[Placement]) -> str:
    """Markers inserted from the end, so that every earlier offset still holds."""
    at: dict[int, list[int]] = {}
    for p in placed:
        numbers = at.setdefault(p.char_offset, [])
        numbers.extend(n for n in p.numbers if n not in numbers)
    pieces: list[str] = []
    last = len(text)
    for offset in sorted(at, reverse=True):
        pieces.append(text[offset:last])
        pieces.append("".join(f"[{n}]" for n in at[offset]))
        last = offset
    pieces.append(text[:last])
    return "".join(reversed(pieces))
