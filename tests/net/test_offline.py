"""Offline: no route to the internet is said once, cause first, with no retry and no line per
provider. Run in a network namespace with only loopback (``unshare -n``), so nothing can leave."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sourcewise.errors import NoProviderAvailable
from sourcewise.net.http import _local
from sourcewise.net.online import no_route


def _offline_command() -> list[str]:
    if no_route():
        return [sys.executable]
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True, check=False).returncode == 0:
        return [unshare, "-n", sys.executable]
    pytest.skip("this machine has a route and no network namespace: offline cannot be made safely")


def test_search_offline_says_no_network_once(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_CSE_KEY", "_CSE_ID", "_URL"))}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    out = subprocess.run(
        [*_offline_command(), "-m", "sourcewise", "search", "react server components"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert out.returncode == 3, out.stderr
    lines = out.stderr.strip().splitlines()
    assert lines == [
        "error: No search provider could answer: no network (no route to the internet), so the web "
        "providers were skipped; -v lists each"
    ]
    verbose = subprocess.run(
        [*_offline_command(), "-m", "sourcewise", "search", "react server components", "-v"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert "no network (no route to the internet); moving on" in verbose.stderr
    assert "retrying" not in verbose.stderr  # no retry when no address can be reached


def test_fetch_offline_does_not_retry_a_name_it_cannot_resolve(tmp_path: Path) -> None:
    """With no route to the internet the DNS server cannot be reached either: each unresolvable
    link (``ask`` reads the web's hits) waited 1.5 s of back-off for retries that could not help."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_CSE_KEY", "_CSE_ID", "_URL"))}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    out = subprocess.run(
        [*_offline_command(), "-m", "sourcewise", "fetch", "https://docs.python.org/3/", "-v"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert out.returncode != 0, out.stdout
    assert "cannot resolve docs.python.org" in out.stderr, out.stderr
    assert "retrying" not in out.stderr


def test_the_failure_message_puts_the_cause_first_and_stays_short() -> None:
    attempts = [(f"p{i}", "not configured (set P_KEY)") for i in range(7)]
    attempts.append(("searxng", "transient: connection failed (ConnectError)"))
    message = str(NoProviderAvailable(attempts))
    assert message.startswith("No search provider could answer: searxng: transient: connection failed")
    assert "(7 more not configured)" in message
    assert len(message) < 250
    assert str(NoProviderAvailable([], offline=True)).startswith(
        "No search provider could answer: no network"
    )


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080/search", True),
        ("http://localhost/x", True),
        ("http://10.1.2.3/", True),
        ("http://[::1]:9/", True),
        ("https://api.search.brave.com/res/v1/web/search", False),
        ("https://8.8.8.8/", False),
    ],
)
def test_local_hosts_are_never_offline(url: str, local: bool) -> None:
    assert _local(url) is local
