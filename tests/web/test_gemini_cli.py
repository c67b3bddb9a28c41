"""The gemini-cli provider against a fake ``gemini`` executable that each test writes and puts on PATH.

The fake stands in for the real CLI, which needs a Google login and the internet; it is a real
executable run as a real subprocess, and it records the arguments it was given.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sourcewise import AuthError, ParseError, ProviderError, ProviderNotConfigured, load_settings
from sourcewise.config import Settings
from sourcewise.web.engine import Engine
from sourcewise.web.providers import gemini_cli

REPLY = {
    "answer": "React Server Components render on the server.",
    "results": [
        {
            "title": "Server Components - React",
            "url": "https://react.dev/reference/rsc/server-components",
            "snippet": "RSC docs",
        },
        {
            "title": "RFC",
            "url": "https://github.com/reactjs/rfcs/blob/main/text/0188-server-components.md",
            "snippet": "",
        },
    ],
}


def fake_gemini(folder: Path, body: str, *, code: int = 0, stderr: str = "", sleep: float = 0.0) -> Path:
    """Write an executable named ``gemini`` that prints ``body``, records its argv and appends its
    pid to ``runs`` (one line a run)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "gemini"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys, time\n"
        f"open({str(folder / 'argv.json')!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
        f"open({str(folder / 'runs')!r}, 'a').write(f'{{os.getpid()}}\\n')\n"
        f"time.sleep({sleep})\n"
        f"sys.stdout.write({body!r})\n"
        f"sys.stderr.write({stderr!r})\n"
        f"sys.exit({code})\n",
        "utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return folder


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return folder


def cli_settings(tmp_path: Path, **extra: object) -> Settings:
    options: dict[str, object] = {
        "providers": ["gemini-cli"],
        "state_dir": tmp_path / "state",
        "timeout": 2.0,
    }
    return load_settings(**{**options, **extra})


async def test_wrapped_json_reply_becomes_rated_results(on_path: Path, tmp_path: Path) -> None:
    fake_gemini(on_path, json.dumps({"response": "```json\n" + json.dumps(REPLY) + "\n```", "stats": {}}))
    response = await Engine(cli_settings(tmp_path)).asearch("React Server Components")
    assert response.provider == "gemini-cli"
    assert response.results[0].url == "https://react.dev/reference/rsc/server-components"
    assert response.results[0].tier == 1
    assert response.answer == REPLY["answer"]
    argv = json.loads((on_path / "argv.json").read_text())
    assert argv[:3] == ["--output-format", "json", "-p"]
    assert "google_web_search" in argv[3]
    assert '"React Server Components"' in argv[3]


async def test_a_prose_reply_with_its_sources_list_becomes_rated_results(
    on_path: Path, tmp_path: Path
) -> None:
    """Issue 24: the CLI's google_web_search answers in prose with a ``Sources:`` list
    (``[1] Title (url)``, as gemini-cli writes it); the links are rated and the words kept."""
    prose = (
        'Web search results for "React Server Components":\n\n'
        "React Server Components render on the server.[1] The RFC explains why.[2]\n\n"
        "Sources:\n[1] Server Components - React (https://react.dev/reference/rsc/server-components)\n"
        "[2] RFC 0188 (https://github.com/reactjs/rfcs/blob/main/text/0188-server-components.md)"
    )
    fake_gemini(on_path, json.dumps({"response": prose, "stats": {}}))
    response = await Engine(cli_settings(tmp_path)).asearch("React Server Components")
    assert [r.url for r in response.results] == [
        "https://react.dev/reference/rsc/server-components",
        "https://github.com/reactjs/rfcs/blob/main/text/0188-server-components.md",
    ]
    assert [r.tier for r in response.results] == [1, 1]
    assert response.results[0].snippet == "React Server Components render on the server."
    assert response.answer is not None
    assert "render on the server.[1]" in response.answer
    assert "Sources:\n[1] Server Components - React" in response.answer  # [n] keep their list


async def test_timeout_kills_the_cli_and_moves_on(on_path: Path, tmp_path: Path) -> None:
    fake_gemini(on_path, json.dumps(REPLY), sleep=30)
    engine = Engine(cli_settings(tmp_path, provider_options={"gemini-cli": {"timeout": 1.5}}))
    with pytest.raises(Exception, match="timed out") as info:
        await engine.asearch("React Server Components")
    assert "gemini-cli" in str(info.value)
    # A CLI killed before its Python started writes no pid (a loaded machine): nothing left to check.
    runs_file = on_path / "runs"
    runs = [int(line) for line in runs_file.read_text().split()] if runs_file.exists() else []
    assert len(runs) <= 1, "a timed-out CLI was run again"
    for pid in runs:
        assert await asyncio.to_thread(wait_until_gone, pid), "the timed-out CLI still runs"


@pytest.mark.parametrize(
    ("body", "code", "stderr", "error", "match"),
    [
        (
            "",
            41,
            "Please set an Auth method in your settings.json or specify GEMINI_API_KEY",
            AuthError,
            "log in",
        ),
        ("", 1, "Segmentation fault", ProviderError, "status 1"),
        ("I could not search today, sorry.", 0, "", ParseError, "JSON"),
        (json.dumps({"response": "no json here"}), 0, "", ParseError, "JSON"),
        (json.dumps({"error": {"message": "quota"}}), 0, "", ProviderError, "quota"),
        (json.dumps({"results": "nope"}), 0, "", ParseError, "results"),
    ],
)
async def test_failures_are_typed(
    on_path: Path, tmp_path: Path, body: str, code: int, stderr: str, error: type[Exception], match: str
) -> None:
    fake_gemini(on_path, body, code=code, stderr=stderr)
    from sourcewise.net.http import make_client
    from sourcewise.web.providers.base import ProviderCall

    s = cli_settings(tmp_path)
    async with make_client(s) as client:
        with pytest.raises(error, match=match):
            await gemini_cli.run(
                ProviderCall("react", 5, s, client, 2.0, time.time, options=gemini_cli.GeminiCliOptions())
            )


@pytest.mark.parametrize(
    ("stderr", "login"),
    [
        ("TypeError: Cannot read properties of undefined (reading 'author')", False),
        ("oauth2client crashed: ECONNRESET", False),
        ("Error: authorship metadata missing", False),
        ("Authentication required: run gemini to sign in", True),
        ("You are not logged in.", True),
        ("401 Unauthorized", True),
        ("Please set an Auth method or GEMINI_API_KEY", True),
    ],
)
async def test_only_a_login_message_is_an_auth_error(
    on_path: Path, tmp_path: Path, stderr: str, login: bool
) -> None:
    fake_gemini(on_path, "", code=1, stderr=stderr)
    from sourcewise.net.http import make_client
    from sourcewise.web.providers.base import ProviderCall

    s = cli_settings(tmp_path)
    async with make_client(s) as client:
        with pytest.raises(ProviderError) as info:
            await gemini_cli.run(
                ProviderCall("react", 5, s, client, 2.0, time.time, options=gemini_cli.GeminiCliOptions())
            )
    assert isinstance(info.value, AuthError) is login, info.value


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")  # a killed orphan may stay a zombie where nothing reaps it


def endless_gemini(folder: Path, pids: Path) -> None:
    """A ``gemini`` that writes forever, and starts a child that writes forever too."""
    folder.mkdir(parents=True, exist_ok=True)
    writer = "import sys\nwhile True: sys.stdout.buffer.write(b'a' * 65536)\n"
    script = folder / "gemini"
    script.write_text(
        f"#!{sys.executable}\n"
        "import os, subprocess, sys\n"
        f"child = subprocess.Popen([sys.executable, '-c', {writer!r}])\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        f"exec({writer!r})\n",
        "utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def wait_until_gone(pid: int) -> bool:
    end = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    return not _alive(pid)


async def test_endless_output_is_cut_at_the_cap_and_the_cli_and_its_children_are_killed(
    on_path: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    endless_gemini(on_path, pids)
    from sourcewise.net.http import make_client
    from sourcewise.web.providers.base import ProviderCall

    s = cli_settings(tmp_path, provider_options={"gemini-cli": {"timeout": 120}})
    async with make_client(s) as client:  # the cap's error, not the deadline's: cut at 2 MB
        with pytest.raises(ParseError, match="more than 2000000 bytes"):
            await gemini_cli.run(
                ProviderCall("react", 5, s, client, 30.0, time.time, options=gemini_cli.GeminiCliOptions())
            )
    for pid in map(int, pids.read_text().split()):
        assert await asyncio.to_thread(wait_until_gone, pid), f"process {pid} still runs"


async def test_failure_moves_the_chain_on(on_path: Path, tmp_path: Path) -> None:
    fake_gemini(on_path, "", code=41, stderr="not logged in")
    from servers import Reply, local_server

    with local_server() as server:
        server.route(
            "/ddi",
            Reply(
                200,
                json.dumps(
                    {
                        "Results": [
                            {
                                "FirstURL": "https://react.dev/",
                                "Text": "React",
                                "Result": '<a href="https://react.dev/">React</a>',
                            }
                        ]
                    }
                ),
                content_type="application/json",
            ),
        )
        s = cli_settings(
            tmp_path,
            providers=["gemini-cli", "duckduckgo_instant"],
            provider_options={"duckduckgo_instant": {"url": f"{server.url}/ddi"}},
        )
        response = await Engine(s).asearch("React Server Components")
    assert response.provider == "duckduckgo_instant"
    assert response.attempts[0][0] == "gemini-cli"
    assert "auth failed" in response.attempts[0][1]


def test_not_on_path_is_not_configured(tmp_path: Path) -> None:
    ready, detail = gemini_cli.configured(gemini_cli.GeminiCliOptions(command="gemini-that-is-not-installed"))
    assert not ready
    assert "PATH" in detail


async def test_executable_vanishing_is_not_configured(tmp_path: Path) -> None:
    from sourcewise.net.http import make_client
    from sourcewise.web.providers.base import ProviderCall

    s = cli_settings(tmp_path)
    options = gemini_cli.GeminiCliOptions(command="gemini-that-is-not-installed")
    async with make_client(s) as client:
        with pytest.raises(ProviderNotConfigured):
            await gemini_cli.run(ProviderCall("react", 5, s, client, 2.0, time.time, options=options))


@settings(deadline=None)
@given(
    st.text(max_size=200)
    | st.builds(
        json.dumps,
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=10),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(
                    st.sampled_from(["results", "response", "answer", "title", "url", "snippet", "error"]),
                    inner,
                    max_size=4,
                )
            ),
            max_leaves=15,
        ),
    )
)
def test_parse_output_gives_results_or_a_provider_error(stdout: str) -> None:
    try:
        results, answer = gemini_cli.parse_output(stdout)
    except ProviderError as exc:
        provider = exc.provider
        assert provider == "gemini-cli"
        return
    assert all(r.provider == "gemini-cli" for r in results)
    assert answer is None or isinstance(answer, str)


class _ExitNeverReported:
    """Stands in for asyncio's ``Process`` when the child watcher never reports the exit (what held
    a CI run for 120 s): no real part loses an exit report on demand. Its pid is a real process."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    async def wait(self) -> int:
        await asyncio.Event().wait()  # never set
        raise AssertionError("unreachable")

    def kill(self) -> None:
        os.kill(self.pid, 9)


async def test_a_killed_cli_whose_exit_is_never_reported_does_not_hold_the_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(gemini_cli, "REAP_WAIT", 0.2)
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import time; time.sleep(120)", start_new_session=True
    )
    try:
        await asyncio.wait_for(gemini_cli._stop(_ExitNeverReported(child.pid)), timeout=30)  # type: ignore[arg-type]
        assert await asyncio.wait_for(child.wait(), 30) == -9, "the CLI's process group was not killed"
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
