"""The throwaway PostgreSQL the team tests run on starts, answers over TCP with its password, and
refuses a wrong one."""

from __future__ import annotations

import pytest

from pgserver import PgServer


def test_the_server_answers_with_its_password_and_refuses_another(pg_server: PgServer, pg_url: str) -> None:
    import psycopg

    with psycopg.connect(pg_url) as conn:
        version = conn.execute("SHOW server_version_num").fetchone()
    assert version is not None
    assert int(version[0]) // 10000 == 15
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(pg_server.url(pg_url.rsplit("/", 1)[1]).replace(pg_server.password, "wrong"))
