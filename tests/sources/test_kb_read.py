"""``ask``'s fetch depth on the knowledge base (``KnowledgeBaseSource.read``): a hit reads on into
the chunk after it in its section, on each backend (a real PostgreSQL from tests/pgserver.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sourcewise import KnowledgeBase
from sourcewise.config import Settings
from sourcewise.models import SourceQuery
from sourcewise.sources import resolve_source

# A section the kb cuts in two at a blank line (the chunk size is reached), then another section.
PARAGRAPH = "Tests run in parallel threads by default, which is fast but shares state between them. " * 16
DOC = (
    "# Running tests\n\n## In parallel or one at a time\n\n"
    f"{PARAGRAPH}To run them one at a time, send the thread flag. Take a look at the following example:\n\n"
    "```console\n$ cargo test -- --test-threads=1\n```\n\n"
    "## Showing output\n\nOutput of passing tests is captured and not shown.\n"
)


@pytest.fixture(params=["embedded", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "kb.sqlite3")


async def test_a_hit_reads_on_into_the_next_chunk_of_its_section(location: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tests.md").write_text(DOC, "utf-8")
    with KnowledgeBase(location, semantic=False) as kb:
        kb.index([docs])
        chunks = kb.search("thread", limit=10, mode="lexical")
    assert len(chunks) == 2, "the first section is cut into two chunks"
    where = "url" if "://" in location else "path"
    settings = Settings(state_dir=tmp_path, sources={"kb": {"type": "kb", where: location}})
    source = resolve_source("kb", settings)
    try:
        found = await source.search(
            SourceQuery(source="knowledge_base", query="tests thread output", mode="keyword")
        )
        hits = sorted(found.hits, key=lambda h: h.start_line or 0)
        first = next(h for h in hits if "following example" in h.text)
        assert "--test-threads=1" not in first.text, "the command is in the next chunk"
        read, count, notes = await source.read([first], "how do I run tests one at a time?", 1, 5.0)
        assert "--test-threads=1" in read[0].meta["after"]
        assert (count, notes) == (1, [])
        assert (read[0].text, read[0].location) == (first.text, first.location), "the hit itself is kept"
        last = next(h for h in hits if h.heading_path[-1:] == ("Showing output",))
        alone, count, _ = await source.read([last], "output", 1, 5.0)
        assert ("after" in alone[0].meta, count) == (False, 0), "the last chunk of a file has none after it"
        untouched, count, _ = await source.read([first], "q", 0, 5.0)
        assert ("after" in untouched[0].meta, count) == (False, 0), "depth 0 reads nothing"
    finally:
        await source.aclose()
