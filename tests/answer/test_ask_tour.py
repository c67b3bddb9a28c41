"""Defects a user's tour of ``sourcewise ask`` found, each asked of a real knowledge base indexed
from files written here in the shape of the documents the tour read (this repository's docs,
Debian's /usr/share/doc, Flask's docs)."""

from __future__ import annotations

import os
from datetime import date, datetime
from pathlib import Path

from sourcewise.config import load_settings
from sourcewise.loops.ask import aask
from sourcewise.models import Answer
from sourcewise.session import Session
from sourcewise.sources.kb.source import KnowledgeBase

from servers import LocalServer, Reply


async def _ask(
    tmp_path: Path,
    files: dict[str, str],
    *questions: str,
    settings: dict[str, object] | None = None,
    today: date | None = None,
) -> list[Answer]:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    for name, text in files.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, "utf-8")
    kb = KnowledgeBase(tmp_path / "kb.sqlite3", semantic=False)
    kb.index([docs])
    kb.close()
    kb_only = {"kb": {"type": "kb", "semantic": False}}
    async with Session(load_settings(state_dir=tmp_path, sources=kb_only, **(settings or {}))) as session:
        return [
            await aask(q, sources=["kb"], session=session, use_model=False, today=today) for q in questions
        ]


async def test_an_announcing_sentence_comes_with_its_block_or_not_at_all(tmp_path: Path) -> None:
    # The README's question over this repository's docs ended "Index it, then search it:[3]": the
    # answer's last window was cut after its first unit.
    files = {
        "indexing.md": "# Indexing\n\n```bash\nnotes index ~/notes    # index my notes folder\n"
        "notes index ./docs ~/notes\n```\n",
        "folders.md": "# More folders\n\n```bash\nnotes index ./team-notes    # index the team's notes too\n```\n",
        "reading.md": "# Notes\n\nYou can index your notes with the indexer. It reads every Markdown "
        "note in the folder you give it.\n",
        "start.md": "# Getting started\n\nThe sample folder is a small set of notes. Index your notes, "
        "then search them:\n\n```bash\nnotes index ./notes\nnotes search deploy\n```\n\n"
        "The index stays on your machine.\n",
    }
    (answer,) = await _ask(tmp_path, files, "How do I index my notes?")
    assert answer.answered, answer.text
    lines = answer.text.splitlines()
    announced = [i for i, line in enumerate(lines) if line.rstrip("[]0123456789").endswith(":")]
    assert all(i + 1 < len(lines) and lines[i + 1].startswith("```") for i in announced), answer.text


async def test_a_url_in_the_question_is_read_not_required_of_the_answer(
    server: LocalServer, tmp_path: Path
) -> None:
    # Offline, "Summarize https://docs.python.org/3/library/asyncio.html" cited command blocks of
    # unrelated docs that hold the URL's pieces (python, library, asyncio, html). A host under
    # .invalid never resolves (RFC 6761): the page cannot be read, as offline.
    server.route(
        "/3/library/json.html",
        Reply(200, "<html><body><article><h1>json: JSON encoder and decoder</h1><p>The json module "
              "exposes an API familiar to users of the standard library marshal and pickle modules."
              "</p></article></body></html>"),
    )  # fmt: skip
    files = {
        "fetch.md": "# Fetching pages\n\nRead one page of the Python docs:\n\n```bash\n"
        "sourcewise fetch https://docs.python.org/3/library/asyncio.html\n```\n",
        "notes.md": "# Notes\n\nThe release checklist lives in the wiki.\n",
    }
    settings = {"allow_private": True, "source_timeout": 5.0}
    unread, read = await _ask(
        tmp_path,
        files,
        "Summarize https://docs.python.invalid/3/library/asyncio.html",
        f"Summarize {server.url}/3/library/json.html",
        settings=settings,
    )
    assert not unread.answered, unread.text
    assert not unread.citations
    assert read.answered, read.text
    assert {r.hit.location for r in read.sources} == {f"{server.url}/3/library/json.html"}


RUNBOOKS = {
    "runbook-2024.md": "---\ntitle: Deployment runbook (2024)\ndate: 2024-03-04\n---\n\n# Deployment runbook\n\n"
    "Restart the frobnicator by hand after every deployment; it does not recover on its own.\n",
    "runbook.md": "---\ntitle: Deployment runbook\ndate: 2026-11-18\n---\n\n# Deployment runbook\n\n"
    "The frobnicator now restarts itself after a deployment; leave it alone for two minutes.\n",
}


async def test_a_filter_typed_in_the_question_is_a_constraint_not_words(tmp_path: Path) -> None:
    # "... about the frobnicator? after:2026-01-01" said nothing answers: after, 2026 and 01 were
    # read as words the answer had to hold.
    (answer,) = await _ask(
        tmp_path, RUNBOOKS, "What does the deployment runbook say about the frobnicator? after:2026-01-01"
    )
    assert answer.answered, answer.text
    assert [r.hit.path.rsplit("/", 1)[-1] for r in answer.sources if r.hit.path] == ["runbook.md"]


async def test_the_plans_dates_reach_the_knowledge_base(tmp_path: Path) -> None:
    # "last week" kept the 2024 runbook: the knowledge base's query had no after:/before:.
    today = date(2026, 11, 25)  # a Wednesday: last week is 2026-11-16 .. 2026-11-22
    docs = tmp_path / "docs"
    docs.mkdir()
    undated = docs / "frobnicator-notes.md"  # no front matter: filtered by its modification day
    undated.write_text("# Frobnicator notes\n\nThe frobnicator logs to /var/log/frob after a deployment.\n")
    os.utime(undated, (datetime(2023, 5, 2).timestamp(),) * 2)
    answers = await _ask(
        tmp_path,
        RUNBOOKS,
        "What did the deployment runbook say about the frobnicator last week?",
        today=today,
    )
    found = {r.hit.path.rsplit("/", 1)[-1] for r in answers[0].hits if r.hit.path}
    assert found == {"runbook.md"}, found


async def test_a_rest_literal_block_stays_a_block(tmp_path: Path) -> None:
    # Flask's reST docs: the block after ".. code-block:: python" or a paragraph ending "::" was
    # flattened into one prose line.
    quickstart = (
        "Quickstart\n==========\n\nA Minimal Application\n---------------------\n\n"
        "A minimal Flask application looks something like this:\n\n"
        ".. code-block:: python\n    :caption: hello.py\n\n    from flask import Flask\n\n"
        '    app = Flask(__name__)\n\n    @app.route("/")\n    def hello_world():\n'
        '        return "<p>Hello, World!</p>"\n\n'
        "To run the application, use the ``flask`` command::\n\n    $ flask --app hello run\n"
        "     * Serving Flask app 'hello'\n\nThe development server is not for production.\n"
    )
    (minimal, run) = await _ask(
        tmp_path,
        {"quickstart.rst": quickstart},
        "What does a minimal Flask application look like?",
        "How do I run the application with the flask command?",
    )
    assert minimal.answered, minimal.text
    assert run.answered, run.text
    assert "```python\nfrom flask import Flask\n\napp = Flask(__name__)" in minimal.text
    assert "```\n$ flask --app hello run\n" in run.text
    assert ":caption:" not in minimal.text
    assert "::" not in run.text


def test_a_bare_site_and_a_filter_word_with_a_plain_value_stay_words() -> None:
    """Found in review: every token holding a site or a key of the shared filter vocabulary had
    been dropped, so "socket.io" and "on:push" were not asked of the answer."""
    from sourcewise.answer.asked import read

    def words(question: str) -> set[str]:
        return {w for group in read(question).groups for w in group}

    assert {"socket", "io"} <= words("What is socket.io?")
    assert {"fli", "io"} <= words("How do I deploy to fly.io?")
    assert "push" in words("What does on:push trigger?")
    assert "open" in words("How do I search is:open issues?")
    assert not {"2026", "01", "eng"} & words("What did sarah say in:#eng after:2026-01-01")
    # a person, a channel or a site constrains where to look (found in a second review)
    assert not {"sarah", "engin", "site", "doc", "org"} & words("deploy plan from:Sarah in:Engineering")
    assert not {"site", "doc", "org"} & words("site:docs.python.org asyncio gather timeout")
    assert read("Summarize https://docs.python.org/3/library/asyncio.html").urls


def test_a_double_colon_opens_a_literal_block_only_as_rest_writes_one() -> None:
    """Found in review: any line ending "::" opened a block, in man pages too, and option lines
    were dropped from it as if after a directive."""
    from sourcewise.answer.extractive import units

    said = units("  It listens on all addresses, that is ::\n  and 0.0.0.0, on port 8080.\n", wrapped=True)
    assert [u.text for u in said] == ["It listens on all addresses, that is :: and 0.0.0.0, on port 8080."]
    man = units("-k::\n--key=<value>::\nSorting key.\n", wrapped=True)
    assert all(u.kind != "code" for u in man)
    assert "-k" in man[0].text
    vim = units("To show line numbers, type::\n\n    :set number\n\nThen save.\n")
    assert [u.text for u in vim] == ["To show line numbers, type:", "```\n:set number\n```", "Then save."]
