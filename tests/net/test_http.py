"""The provider client (``net.http.make_client``) follows the settings, not constants of its own."""

from __future__ import annotations

from pathlib import Path

from sourcewise.config import Settings
from sourcewise.net.http import make_client


async def test_the_provider_client_takes_its_limits_from_the_settings(tmp_path: Path) -> None:
    for redirects, timeout in ((0, 2.5), (7, 9.0)):
        settings = Settings(state_dir=tmp_path, max_redirects=redirects, timeout=timeout)
        async with make_client(settings) as client:
            assert client.max_redirects == redirects
            assert client.timeout.connect == timeout
            assert client.headers["User-Agent"] == settings.user_agent
