"""Issue 25: a name the task uses that spells a module (``autodoc_typehints`` ->
``autodoc/typehints.py``, ``xr.concat`` -> ``concat.py``) points at that module; names that only
look alike (``attachment_types``, ``httpx.Client``, a host, a dunder) point nowhere."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as hyp

from sourcewise.sources.code.facts import spelled_by
from sourcewise.sources.code.locate import FileFacts, Repo, rank
from sourcewise.sources.code.taskread import read_task

PATHS = [
    "sphinx/__init__.py",
    "sphinx/application.py",
    "sphinx/ext/autodoc/__init__.py",
    "sphinx/ext/autodoc/typehints.py",
    "xarray/structure/concat.py",
    "src/black/ranges.py",
    "src/click/types.py",
    "httpx/__init__.py",
    "httpx/_client.py",
    "fastapi/openapi/docs.py",
]


def test_a_config_key_spells_its_module_and_folder() -> None:
    got = spelled_by(["autodoc_typehints"], PATHS)
    assert got == {"sphinx/ext/autodoc/typehints.py": ("autodoc_typehints", True)}


def test_an_alias_attribute_and_a_flag_spell_their_module() -> None:
    got = spelled_by(["xr.concat", "--line-ranges"], PATHS)
    assert got == {
        "xarray/structure/concat.py": ("xr.concat", False),
        "src/black/ranges.py": ("--line-ranges", False),
    }


def test_names_that_only_look_alike_spell_nothing() -> None:
    # a snake_case name without the folder, a package's attribute, hosts, file names, dunders,
    # the package itself, a bare word
    names = ["attachment_types", "httpx.Client", "docs.python.org", "para.html", "__sphinx_init__",
             "sphinx_build", "concat", "typehints"]  # fmt: skip
    assert spelled_by(names, PATHS) == {}


def test_rank_puts_the_spelled_module_above_wordier_files() -> None:
    reading = read_task('With `autodoc_typehints = "description"` autoclass shows a return type.')
    repo = Repo([FileFacts(p) for p in PATHS])
    lexical = {"sphinx/application.py": 3.0, "sphinx/ext/autodoc/__init__.py": 2.7,
               "sphinx/ext/autodoc/typehints.py": 1.5}  # fmt: skip
    ranked = rank(reading, repo, lexical)
    assert ranked[0].path == "sphinx/ext/autodoc/typehints.py"
    assert any("spelled by autodoc_typehints" in r for r in ranked[0].reasons)


@given(hyp.lists(hyp.text(max_size=40), max_size=8), hyp.lists(hyp.text(max_size=40), max_size=8))
def test_spelled_by_takes_any_names_and_paths(names: list[str], paths: list[str]) -> None:
    got = spelled_by(names, paths)
    assert set(got) <= set(paths)
    assert all(name in names for name, _ in got.values())
