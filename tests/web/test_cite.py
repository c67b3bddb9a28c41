"""insert_citations: recorded Gemini answers, gemini-cli's vectors, and our own multi-byte cases."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_gemini import cassette

import sourcewise
from sourcewise import InvalidInput, insert_citations
from sourcewise.web.cite import byte_to_char, char_to_byte, chars_for_bytes, cite

from conftest import shared


def _meta(text: str, spans: list[tuple[str, list[int]]], n_chunks: int = 3, drift: int = 0) -> dict[str, Any]:
    """Metadata whose supports end after each given segment (first occurrence), offsets in bytes."""
    supports = []
    for segment, chunks in spans:
        start = text.index(segment)
        end_byte = len(text[: start + len(segment)].encode("utf-8"))
        supports.append(
            {
                "segment": {
                    "startIndex": end_byte - len(segment.encode()) + drift,
                    "endIndex": end_byte + drift,
                    "text": segment,
                },
                "groundingChunkIndices": chunks,
            }
        )
    chunks_ = [{"web": {"title": f"T{i}", "uri": f"https://s{i}.example/"}} for i in range(n_chunks)]
    return {"groundingChunks": chunks_, "groundingSupports": supports}


def recorded() -> list[tuple[str, str, dict[str, Any]]]:
    """(file, answer text, groundingMetadata) for every recorded response that has grounding."""
    folder = shared("providers", "gemini", "pydantic-ai")
    out = []
    for path in sorted(folder.glob("*.yaml")):
        for interaction in cassette(path)["interactions"]:
            body = interaction["response"].get("parsed_body")
            if not isinstance(body, dict):
                continue
            for candidate in body.get("candidates", []):
                meta = candidate.get("groundingMetadata")
                if meta and meta.get("groundingSupports"):
                    parts = candidate["content"]["parts"]
                    text = "".join(p.get("text", "") for p in parts if not p.get("thought"))
                    out.append((path.name, text, meta))
    return out


# -- recorded responses --------------------------------------------------------------------------
def test_every_recorded_support_lands_where_its_text_ends() -> None:
    cases = recorded()
    assert len(cases) >= 7
    total = 0
    for name, text, meta in cases:
        result = cite(text, meta)
        assert result.notes == (), name
        assert len(result.placements) == len(meta["groundingSupports"]), name
        for placement in result.placements:
            segment = meta["groundingSupports"][placement.support]["segment"]["text"]
            assert text[: placement.char_offset].endswith(segment), (name, placement)
            total += 1
    assert total == 36  # the number of supports in the recordings (offset_check.json)


def test_offset_check_file_agrees_with_how_each_support_was_placed() -> None:
    checks = json.loads(shared("providers", "gemini", "offset_check.json").read_text("utf-8"))
    by_end: dict[tuple[str, int], str] = {}
    for name, text, meta in recorded():
        for p in cite(text, meta).placements:
            by_end[(name, meta["groundingSupports"][p.support]["segment"]["endIndex"])] = p.how
    assert len(checks) == 36
    for check in checks:
        how = by_end[(check["file"], check["endIndex"])]
        assert how == ("offset" if check["utf8_byte_slice_matches"] else "found"), check


def test_recorded_answer_keeps_its_text_and_appends_numbered_sources() -> None:
    _, text, meta = next(c for c in recorded() if c[0] == "test_google_model_web_search_tool.yaml")
    out = insert_citations(text, meta)
    body, sources = out.split("\n\nSources:\n")
    assert body.replace("[1]", "").replace("[2]", "").replace("[3]", "") == text
    assert "69°F.[1]" in body
    lines = sources.splitlines()
    assert len(lines) == len(meta["groundingChunks"])
    assert lines[1] == f"[2] weather.gov ({meta['groundingChunks'][1]['web']['uri']})"


def test_web_fetch_recording_is_cited_like_web_search() -> None:
    """The web_fetch tool's recording keeps its body as a JSON string: its grounding is cited the same way."""
    path = shared("providers", "gemini", "pydantic-ai") / "test_google_model_web_fetch_tool.yaml"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    found = 0
    for interaction in cassette(path)["interactions"]:
        body = json.loads(interaction["response"]["body"]["string"])
        for candidate in body.get("candidates", []):
            meta = candidate.get("groundingMetadata")
            if not meta or not meta.get("groundingSupports"):
                continue
            text = "".join(p.get("text", "") for p in candidate["content"]["parts"] if not p.get("thought"))
            result = cite(text, meta)
            assert result.notes == ()
            for placement in result.placements:
                segment = meta["groundingSupports"][placement.support]["segment"]["text"]
                assert text[: placement.char_offset].endswith(segment)
                found += 1
            chunk = meta["groundingChunks"][0]["web"]
            assert f"[1] {chunk['title']} ({chunk['uri']})" in insert_citations(text, meta)
    assert found >= 1


def test_gemini_cli_vectors() -> None:
    data = json.loads(
        shared(
            "providers", "gemini", "gemini-cli-test-vectors", "web_search_citation_vectors.json"
        ).read_text("utf-8")
    )
    assert data["cases"]
    for case in data["cases"]:
        candidate = case["response"]["candidates"][0]
        text = "".join(p["text"] for p in candidate["content"]["parts"])
        prefix = f'Web search results for "{case["query"]}":\n\n'
        assert case["expected_llmContent"].startswith(prefix)
        assert (
            insert_citations(text, candidate["groundingMetadata"])
            == case["expected_llmContent"][len(prefix) :]
        )


# -- our own multi-byte cases --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "segment", "expected"),
    [
        (
            "서울은 한국의 수도입니다. 부산은 항구 도시입니다.",
            "서울은 한국의 수도입니다.",
            "서울은 한국의 수도입니다.[1] 부산은",
        ),
        ("Rockets 🚀 fly. Cats 🐈‍⬛ sleep.", "Cats 🐈‍⬛ sleep.", "Cats 🐈‍⬛ sleep.[1]"),
        ("Cafe\u0301 au lait. Tea.", "Cafe\u0301 au lait.", "Cafe\u0301 au lait.[1] Tea."),
    ],
)
def test_multibyte_offsets(text: str, segment: str, expected: str) -> None:
    out = insert_citations(text, _meta(text, [(segment, [0])]))
    assert expected in out


def test_drifted_offsets_find_the_text() -> None:
    text = "첫 문장입니다. 두 번째 문장입니다. 세 번째."
    out = cite(text, _meta(text, [("두 번째 문장입니다.", [1])], drift=2))
    assert out.placements[0].how == "found"
    assert "두 번째 문장입니다.[2] 세" in out.body


def test_repeated_segment_goes_to_the_occurrence_nearest_its_offset() -> None:
    text = "It is fast. Tests show more. It is fast. The end."
    second_end = len(text[: text.rindex("It is fast.") + len("It is fast.")].encode())
    meta = {
        "groundingChunks": [{"web": {"title": "A", "uri": "https://a.example/"}}],
        "groundingSupports": [
            {"segment": {"endIndex": second_end + 3, "text": "It is fast."}, "groundingChunkIndices": [0]}
        ],
    }
    body = cite(text, meta).body
    assert body == "It is fast. Tests show more. It is fast.[1] The end."


def test_several_chunks_and_shared_end_are_merged_in_order() -> None:
    text = "Alpha. Beta."
    meta = _meta(text, [("Alpha.", [2, 0]), ("Alpha.", [1, 0])])
    assert cite(text, meta).body == "Alpha.[1][3][2] Beta."


def test_offset_inside_a_character_is_never_split() -> None:
    text = "가나다라"
    meta = {
        "groundingChunks": [{"web": {"title": "A", "uri": "https://a.example/"}}],
        "groundingSupports": [{"segment": {"endIndex": 4}, "groundingChunkIndices": [0]}],  # inside 나
    }
    assert cite(text, meta).body == "가나[1]다라"


def test_bad_supports_are_ignored_with_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    text = "One. Two."
    meta = {
        "groundingChunks": [{"web": {"title": "A", "uri": "https://a.example/"}}],
        "groundingSupports": [
            {"segment": {"endIndex": 999}, "groundingChunkIndices": [0]},
            {"segment": {"endIndex": 4, "text": "One."}, "groundingChunkIndices": [5]},
            {"segment": {"endIndex": 9, "text": "Two."}, "groundingChunkIndices": [0, 7]},
            "not a support",
        ],
    }
    with caplog.at_level(logging.WARNING, logger="sourcewise"):
        out = insert_citations(text, meta)
    assert out == "One. Two.[1]\n\nSources:\n[1] A (https://a.example/)"
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "outside the answer" in logged
    assert "no chunk it points at exists" in logged
    assert "point past" in logged


def test_no_metadata_is_the_text_itself_and_sdk_spelling_works() -> None:
    assert insert_citations("Plain.", None) == "Plain."
    assert insert_citations("Plain.", {}) == "Plain."
    snake = {
        "grounding_chunks": [{"web": {"title": "A", "uri": "https://a.example/"}}],
        "grounding_supports": [
            {"segment": {"end_index": 6, "text": "Plain."}, "grounding_chunk_indices": [0]}
        ],
    }
    assert insert_citations("Plain.", snake).startswith("Plain.[1]\n\nSources:\n[1] A")


def test_titles_from_outside_lose_control_characters() -> None:
    meta = {"groundingChunks": [{"web": {"title": "Evil\n[9] fake\x1b[31m", "uri": "https://e.example/\r"}}]}
    lines = insert_citations("x", meta).split("\n\nSources:\n")[1].splitlines()
    assert lines == ["[1] Evil [9] fake (https://e.example/)"]  # the colour sequence goes whole


def test_bad_input_is_a_typed_error() -> None:
    with pytest.raises(InvalidInput):
        insert_citations(b"bytes", {})  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        insert_citations("x", ["not", "a", "mapping"])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        insert_citations("x", {"groundingSupports": "nope"})
    with pytest.raises(InvalidInput, match="at most"):
        insert_citations("x" * 1_000_001, None)


# -- offsets helpers ------------------------------------------------------------------------------
def test_byte_and_char_offsets_round_trip() -> None:
    text = "a한🚀e\u0301"
    for char in range(len(text) + 1):
        assert byte_to_char(text, char_to_byte(text, char)) == char
    assert char_to_byte(text, 2) == 4
    assert byte_to_char(text, 2) == 2  # inside 한: the end of that character
    with pytest.raises(InvalidInput):
        byte_to_char(text, 99)
    with pytest.raises(InvalidInput):
        char_to_byte(text, -1)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=40), st.lists(st.integers(min_value=-5, max_value=200), max_size=8))
def test_chars_for_bytes_matches_a_prefix_decode(text: str, offsets: list[int]) -> None:
    data = text.encode("utf-8", "surrogatepass")
    for offset, char in chars_for_bytes(text, offsets).items():
        end = offset
        while end < len(data) and 0x80 <= data[end] < 0xC0:
            end += 1
        assert char == len(data[:end].decode("utf-8", "surrogatepass"))


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 300) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "groundingChunks",
                    "groundingSupports",
                    "segment",
                    "endIndex",
                    "text",
                    "groundingChunkIndices",
                    "web",
                    "uri",
                    "title",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(deadline=None)
@given(st.text(max_size=60), _json)
def test_hostile_metadata_gives_text_or_a_typed_error(text: str, meta: Any) -> None:
    try:
        result = cite(text, meta)
    except sourcewise.SourcewiseError as exc:
        message = str(exc)
        assert message  # a clear message, and nothing but a SourcewiseError escapes
        return
    assert result.text.startswith(result.body)
    assert all(0 <= p.char_offset <= len(text) for p in result.placements)
    if "[" not in text:  # the markers are the only thing added to the answer
        assert re.sub(r"\[\d+\]", "", result.body) == text


def test_insert_citations_is_public() -> None:
    assert "insert_citations" in sourcewise.__all__
    assert Path(sourcewise.__file__).exists()


# -- time: the search for drifted text reads the answer a bounded number of times -----------------
def _reference_nearest(text: str, needle: str, target: int) -> int | None:
    """Every occurrence (overlapping ones too); the end nearest ``target``, the earlier on a tie."""
    ends = [i + len(needle) for i in range(len(text) - len(needle) + 1) if text.startswith(needle, i)]
    return min(ends, key=lambda end: (abs(end - target), end), default=None)


@settings(deadline=None)
@given(st.text("ab가", max_size=30), st.text("ab가", min_size=1, max_size=4), st.integers(0, 40))
def test_the_nearest_occurrence_is_the_one_a_full_scan_picks(text: str, needle: str, target: int) -> None:
    from sourcewise.web.cite import _nearest

    target = min(target, len(text))
    assert _nearest(text, needle, target)[0] == _reference_nearest(text, needle, target)


def _one_chunk(supports: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "groundingChunks": [{"web": {"uri": "https://a.com", "title": "A"}}],
        "groundingSupports": supports,
    }


@pytest.mark.parametrize(
    ("text", "supports"),
    [
        # no usable offset: the target is the end, and every occurrence used to be walked (16 s)
        ("a" * 100_000, [{"segment": {"text": "a"}, "groundingChunkIndices": [0]}] * 100),
        ("a" * 1_000_000, [{"segment": {"text": "a"}, "groundingChunkIndices": [0]}] * 10_000),
        # multi-byte text: every found place needed its byte offset from a fresh encode
        ("가" * 1_000_000, [{"segment": {"text": "가"}, "groundingChunkIndices": [0]}] * 10_000),
        # 10k different segments that are not in the answer, each a full read of 1 M characters
        (
            "가" * 1_000_000,
            [
                {"segment": {"text": f"나{i}", "endIndex": 3 * i}, "groundingChunkIndices": [0]}
                for i in range(10_000)
            ],
        ),
    ],
    ids=["100k-x100", "1M-x10k", "1M-korean-x10k", "1M-absent-x10k"],
)
def test_hostile_answers_are_cited_in_bounded_time(text: str, supports: list[dict[str, Any]]) -> None:
    import time

    started = time.process_time()  # CPU time: other work on a loaded machine does not count
    result = cite(text, _one_chunk(supports))
    assert time.process_time() - started < 5  # the first took 16 s, the others minutes to hours
    assert len(result.placements) == len(supports)
    if "endIndex" not in supports[0]["segment"]:
        assert {p.char_offset for p in result.placements} == {len(text)}
        assert {p.byte_offset for p in result.placements} == {len(text.encode())}
