from __future__ import annotations

import itertools
import logging
import os
import shutil
import sys
import tempfile
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

# Tests are laid out as src/ is (tests/web, tests/doors, ...), and some share helpers with a test
# module of another area (``from test_cli import run``): every area's folder is importable, whatever
# order pytest collects them in, so such an import never depends on which file was collected first.
sys.path.insert(0, str(Path(__file__).parent))
sys.path.extend(str(p) for p in sorted(Path(__file__).parent.iterdir()) if any(p.glob("test_*.py")))

from sourcewise.config import Settings, load_settings
from sourcewise.sources.base import Source
from sourcewise.web import engine as engine_module

from pgserver import pg_server, pg_url, pgvector_server, pgvector_url  # noqa: F401  (fixtures: a throwaway PostgreSQL)
from scheduling import (  # noqa: F401  (hooks)
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_xdist_auto_num_workers,
    pytest_xdist_make_scheduler,
)
from servers import LocalServer, local_server

# The suite starts ~100 Python processes (xdist's workers, doors, stdio MCP servers, indexers), each
# importing the package: with PYTHONDONTWRITEBYTECODE set (as on these machines), every one of them
# compiled src/ from source again (~0.15 s of CPU each) and each worker rewrote every test module's
# asserts again. Caches are written beside the sources (``__pycache__``, ignored by git).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Hypothesis budgets. "ci" is fixed and derandomised, so a CI run is reproducible and bounded; "dev"
# is the default. Select one with CI=1 or HYPOTHESIS_PROFILE=NAME. "ci" draws 40 examples a property
# (it drew 60): the whole suite is to pass in under 3 minutes from a fresh clone on 2 cores, and the
# ~120 property tests were a sixth of its test time (the heaviest five files: 20.8 s of CPU at 60,
# 16.7 s at 40, 2026-11-28). A deeper search is one variable away: HYPOTHESIS_PROFILE=deep (300).
hypothesis_settings.register_profile(
    "deep",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
hypothesis_settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
hypothesis_settings.register_profile(
    "dev",
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
FIXTURES = Path(__file__).parent / "fixtures"

_KEYS = (
    "BRAVE_API_KEY",
    "GEMINI_API_KEY",
    "TAVILY_API_KEY",
    "GOOGLE_CSE_KEY",
    "GOOGLE_CSE_ID",
    "SEARXNG_URL",
    "SOURCEWISE_CONFIG",
    "SOURCEWISE_PROVIDERS",
    "SOURCEWISE_TIMEOUT",
    "SOURCEWISE_STATE_DIR",
)


def shared(*parts: str) -> Path:
    """A path under ../shared/data; skip the test when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent (../shared/data not beside the project)")
    return path


@pytest.fixture(scope="session")
def _homes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("homes")


_HOME_NUMBERS = itertools.count()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest, _homes: Path) -> None:
    """No test sees the developer's keys, config file or state, nor trusts any certificate
    authority: every server a test reaches is plain HTTP on 127.0.0.1 (CI allows only loopback).
    An empty SSL_CERT_DIR also spares each HTTP client made here or in a child process the reading
    of the CA bundle (~50 ms of CPU each, and the tests make many).

    The folders are under the test's ``tmp_path`` when it has one; otherwise a fresh path of its
    own, not made (the code makes what it writes): a ``tmp_path`` for each of the ~1,100 tests per
    worker that need none cost a scan of pytest's folder of them each time."""
    home = (
        request.getfixturevalue("tmp_path")
        if "tmp_path" in request.fixturenames
        else (_homes / str(next(_HOME_NUMBERS)))
    )
    for key in _KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setenv("SSL_CERT_DIR", str(home / "no-certificate-authorities"))


@pytest.fixture(autouse=True)
def _quick_provider_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's one retry of a transient provider failure waits 0.01 s instead of 1 s: the
    servers here answer at once or never, and ~40 tests whose provider is down (a closed port, a
    503) waited a second each for a retry they do not look at. The retry itself still happens,
    and a ``Retry-After`` the server sends is still honoured as sent."""
    monkeypatch.setattr(engine_module, "RETRY_DELAY", 0.01)


@pytest.fixture(autouse=True)
def _library_logger() -> Iterator[None]:
    """A command run in this process points the library's logger at its own stderr and stops it
    propagating; every test gets it back as it was, so a later test on the same worker still sees
    the library's records (caplog)."""
    logger = logging.getLogger("sourcewise")
    saved = (logger.handlers[:], logger.propagate, logger.level)
    yield
    logger.handlers[:], logger.propagate, logger.level = saved


_SOURCES: weakref.WeakSet[Source] = weakref.WeakSet()
_source_init = Source.__init__


def _remembered_init(self: Source, *args: Any, **kwargs: Any) -> None:
    _source_init(self, *args, **kwargs)
    _SOURCES.add(self)


Source.__init__ = _remembered_init  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _sources_end_their_threads() -> Iterator[None]:
    """Every source a test made ends its idle worker threads after it, as a ``Session`` does when
    it closes: tests that build a source per Hypothesis example left ~300 daemon threads per worker
    process. A source used again (a module's fixture) starts new threads on its next call."""
    yield
    for source in list(_SOURCES):
        source.close_workers()
    _SOURCES.clear()


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A temporary folder others may list and enter all the way up: a file's readers count every
    folder above it (``sources/readers.py``), and pytest's own sit in a folder only its owner may
    enter, which makes every file in them private to the doors' users."""
    folder = Path(tempfile.mkdtemp(prefix="sw-open-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(state_dir=tmp_path / "state", timeout=2.0)


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with local_server() as srv:
        yield srv
