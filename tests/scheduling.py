"""How the suite is spread over the xdist workers (``-n auto --dist loadfile``, pyproject): two
workers more than cores (``pytest_xdist_auto_num_workers``).

Each test file runs whole on one worker (its module-scoped fixtures start once), as with xdist's own
``loadfile``, with two changes:

- The files that load the real semantic model run on one worker together (``MODEL_FILES``): the
  model costs ~8 s of CPU in every process that loads it, once.
- The slowest files go first (``SLOWEST_FIRST``: each file's wall time in a whole run, slowest
  first): xdist hands a free worker the next file in collection order, so a slow file started last
  would keep one worker busy after the other has finished. xdist's default order (the files with the
  most tests first) is switched off in pyproject (``--no-loadscope-reorder``).

A file missing from the list only runs later; a wrong order costs time, never a result.

Before the workers start, the controller rewrites the asserts of the test files the run collects,
once (``pytest_configure``), so that the workers find pytest's cache written instead of each
rewriting every module at the same time.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadFileScheduling

MODEL = "the semantic model"
MODEL_FILES = frozenset(
    {
        "tests/sources/test_kb.py",
        "tests/sources/test_kbvector.py",
        "tests/sources/test_kbembed.py",
        "tests/sources/test_kbshare.py",
    }
)
SLOWEST_FIRST = (
    MODEL,
    "tests/web/test_budget.py",
    "tests/doors/test_server_schema.py",
    "tests/test_properties.py",
    "tests/sources/test_kbpg.py",
    "tests/test_regex_time.py",
    "tests/doors/test_mcp.py",
    "tests/sources/test_mcp_sources.py",
    "tests/sources/test_kbscale.py",
    "tests/sources/test_kbterms.py",
    "tests/sources/test_mcp_federation.py",
    "tests/doors/test_team.py",
    "tests/doors/test_hostile_hang.py",
    "tests/doors/test_doors_ask.py",
    "tests/web/test_mcp_provider.py",
    "tests/net/test_fetch.py",
    "tests/test_session_owner.py",
    "tests/doors/test_workers.py",
    "tests/web/test_safety.py",
    "tests/doors/test_server.py",
    "tests/doors/test_cli_config.py",
    "tests/doors/test_webpage.py",
    "tests/sources/test_readers.py",
    "tests/sources/test_source_code.py",
    "tests/sources/test_hostile_index.py",
    "tests/net/test_offline.py",
    "tests/doors/test_cli_ask.py",
    "tests/web/test_gemini_cli.py",
    "tests/sources/test_hostile_kbfail.py",
    "tests/doors/test_access.py",
    "tests/test_layers.py",
    "tests/web/test_fast_paths.py",
    "tests/test_startup.py",
)
_RANK = {group: rank for rank, group in enumerate(SLOWEST_FIRST)}


def group_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its file, or the model's group."""
    path = nodeid.split("::", 1)[0]
    return MODEL if path in MODEL_FILES else path


class SlowestFilesFirst(LoadFileScheduling):
    """xdist's ``loadfile``, with the files of ``MODEL_FILES`` as one unit."""

    def _split_scope(self, nodeid: str) -> str:
        return group_of(nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers more than cores. Much of the suite's test time is tests waiting on
    deadlines (timeouts they assert, hung servers they outlast, processes they start), not
    computing; meanwhile the other workers compute. Whole runs on 2 cores, 2026-11-28, quiet
    machine, the same CPU time (~315 s) each: four workers 164.6 and 165.5 s, three 171.0 and
    174.1 s (two: 3 min 38 s against three's 3 min 3 s, an earlier day)."""
    return len(os.sched_getaffinity(0)) + 2


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    return SlowestFilesFirst(config, log) if config.getvalue("dist") == "loadfile" else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest units first (a stable sort: the rest keep their collected order)."""
    items.sort(key=lambda item: _RANK.get(group_of(item.nodeid), len(_RANK)))


def pytest_configure(config: pytest.Config) -> None:
    """On the controller of a parallel run, rewrite the test modules' asserts once, before the
    workers start. Otherwise every worker rewrites all ~120 modules itself, at the same moment as
    the others (none finds another's cache yet): ~6 s of CPU a worker from a fresh clone, 2026-11-28.
    This is pytest's own rewriter writing its own cache (a private API: if it moves, nothing is done
    here and the workers rewrite as before, which costs time, never a result)."""
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        return
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        where = config.invocation_params.dir
        asked = [(where / a.split("::")[0]).resolve() for a in config.args]  # only what this run collects
        for fn in sorted(Path(__file__).parent.rglob("*.py")):
            if not (fn.name.startswith("test_") or fn.name == "conftest.py"):
                continue
            if not any(fn == a or a in fn.parents for a in asked):
                continue
            cache = rewrite.get_cache_dir(fn)
            pyc = cache / (fn.name[:-3] + rewrite.PYC_TAIL)
            if rewrite._read_pyc(fn, pyc, state.trace) is None and rewrite.try_makedirs(cache):
                stat, code = rewrite._rewrite_test(fn, config)
                rewrite._write_pyc(state, code, stat, pyc)
    except (ImportError, AttributeError, KeyError, TypeError, OSError, SyntaxError):
        return
