"""Start-up: ``import sourcewise`` and ``sourcewise --help`` load no heavy module they do not need.

Each check runs in a fresh interpreter and reads ``sys.modules`` there.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "pydantic",
    "pydantic_settings",
    "trafilatura",
    "pypdf",
    "charset_normalizer",
    "chardet",
    "httpx",
    "publicsuffixlist",
    "dateparser",
    "lxml",
    "typer",
    "rich",
)


def _loaded(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    modules = set(json.loads(out.stdout.splitlines()[-1]))
    return {name for name in HEAVY if name in modules}


def test_import_sourcewise_loads_nothing_heavy() -> None:
    assert _loaded("import sourcewise") == set()


def test_the_version_needs_nothing_heavy() -> None:
    assert _loaded("import sourcewise; sourcewise.__version__") == set()


def test_canonical_url_needs_no_http_client_nor_settings() -> None:
    loaded = _loaded("import sourcewise; sourcewise.canonical_url('https://example.com/')")
    assert not loaded & {"pydantic_settings", "httpx", "trafilatura", "pypdf", "charset_normalizer", "typer"}


@pytest.mark.parametrize("name", ["route", "plan", "rate_source"])
def test_route_plan_and_rating_need_no_http_client(name: str) -> None:
    loaded = _loaded(f"import sourcewise; sourcewise.{name}")
    assert not loaded & {"httpx", "trafilatura", "pypdf", "charset_normalizer", "chardet", "typer", "rich"}


def test_the_help_of_the_command_line_loads_only_the_command_line() -> None:
    code = (
        "import sys\nfrom sourcewise.doors.cli import main as cli\nsys.argv = ['sourcewise', '--help']\n"
        "try:\n    cli.main()\nexcept SystemExit:\n    pass"
    )
    loaded = _loaded(code)
    assert "typer" in loaded
    assert not loaded & {
        "pydantic",
        "pydantic_settings",
        "httpx",
        "trafilatura",
        "pypdf",
        "charset_normalizer",
    }


def test_one_public_suffix_list_per_process_built_on_first_use() -> None:
    code = (
        "import publicsuffixlist\n"
        "made = []\n"
        "real = publicsuffixlist.PublicSuffixList.__init__\n"
        "def count(self, *a, **k):\n"
        "    made.append(1)\n"
        "    real(self, *a, **k)\n"
        "publicsuffixlist.PublicSuffixList.__init__ = count\n"
        "from sourcewise.web import domains, rating; from sourcewise.web import weburls\n"
        "assert not made, 'built at import'\n"
        "rating.rate('https://blog.example.co.uk/x', None, domains.builtin_table())\n"
        "weburls.extract_urls('see example.co.uk/page and docs.python.org')\n"
        "assert len(made) == 1, made"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_lazy_name_is_the_real_object() -> None:
    import sourcewise
    from sourcewise.sources.api import ask, retrieve
    from sourcewise.web.urls import canonical_url

    assert sourcewise.canonical_url is canonical_url
    assert sourcewise.ask is ask
    assert sourcewise.retrieve is retrieve
    with pytest.raises(AttributeError):
        sourcewise.no_such_name  # noqa: B018
    assert set(sourcewise.__all__) <= set(dir(sourcewise))
