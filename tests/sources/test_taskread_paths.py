"""A path in a task is read as a path: a pointer matched against the tree, never prose key terms
(issue 25: a pasted virtualenv path's folders became key terms and lifted the wrong files)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hyp

from retrieve_repo import write_repo
from sourcewise import retrieve
from sourcewise.config import load_settings
from sourcewise.sources.code.taskread import read_task, tails

VENV = "/home/someone/.cache/pypoetry/virtualenvs/app-4uHc0o_q-py3.10/lib/python3.10/site-packages"
PDB = f"""Collecting fails with `--import-mode=importlib`; `--pdb` gives:
```
  {VENV}/shop/runner.py(341)from_call()
-> result = func()
```
"""
SHOP = {
    "src/shop/runner.py": "def from_call(func):\n    return func()\n",
    "src/shop/cache.py": '"""A cache of packages: home, lib, site folders."""\n\n\ndef site_packages_home():\n'
    "    return 'lib'\n",
    "src/shop/env.py": '"""Virtualenvs and pypoetry caches under home: lib, site, packages."""\n\n\n'
    "def virtualenvs():\n    return []\n",
}


def test_a_pasted_environment_path_is_a_pointer_not_prose() -> None:
    reading = read_task(PDB)
    assert f"{VENV}/shop/runner.py" in reading.paths, "still a pointer to the file"
    for word in ("site-packages", "virtualenvs", "pypoetry", "someone", "python3.10"):
        assert word not in reading.prose
    assert not {"py3.10", "python3.10"} & set(reading.modules), "a folder's name is not a module"
    assert "from_call" in reading.names
    assert tails(reading.paths) == ["shop/runner.py"]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("reads and/or writes over I/O", "reads and/or writes over I/O"),
        ("cloned pytest-dev/pytest at 8.2", "cloned pytest-dev/pytest at 8.2"),
        (
            "see https://docs.example.org/en/latest/core.html#app.core.Rational",
            "see https://docs.example.org/en/latest/core.html#app.core.Rational",
        ),
        (
            "see https://github.com/pallets/flask/blob/main/src/flask/cli.py#L10 for load_dotenv",
            "see https://github.com/pallets/flask/blob/main/src/flask/cli.py#L10 for load_dotenv",
        ),
        ("in src/flask/cli.py and conf.py the key is read", "in   and   the key is read"),
        ("C:\\Users\\me\\proj\\x.py fails, as ~/proj/y does", "  fails, as   does"),
    ],
)
def test_paths_leave_the_prose_and_urls_and_other_slashes_stay(text: str, kept: str) -> None:
    assert read_task(text).prose == kept


def test_a_virtualenvs_folders_never_become_key_terms(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "shop", SHOP)
    st = load_settings(state_dir=tmp_path / "state", source_timeout=10.0)
    found = retrieve(PDB, sources=[f"code:{root}"], max_cycles=1, settings=st)
    assert not {"site", "packages", "virtualenvs", "pypoetry", "home", "lib"} & set(found.key_terms)
    assert found.candidates[0].hit.path == "src/shop/runner.py"


@settings(max_examples=60, deadline=None)
@given(
    hyp.lists(hyp.sampled_from(["/", "\\", "~", ".", ":", "a", "b.py", " ", "//", "x://", "\n"])).map("".join)
)
def test_reading_path_like_text_never_raises(text: str) -> None:
    reading = read_task(text)
    assert len(reading.prose) <= len(text) + 1
    assert all("/" not in t.strip("/") or t.count("/") <= 1 for t in tails(reading.paths))
