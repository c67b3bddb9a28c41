"""Issue 25: reading a task like an engineer, ranking a repository's files and definitions for it,
and the examples the issue names (each a test): a pasted ``pip freeze``, a traceback, ``import ssl``,
"test" in a task, a list at least ``limit`` long, one bad line of one file, seed 004's examples."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hyp

from retrieve_repo import AUTH_REPO, AUTH_TASK, write_repo
from sourcewise import retrieve
from sourcewise.config import Settings, load_settings
from sourcewise.sources.code.locate import FileFacts, Repo, kind_of, rank, verbatim_strings
from sourcewise.sources.code.outline import LANGUAGES, Symbol, outline
from sourcewise.sources.code.source import CodeOptions, CodeSource
from sourcewise.sources.code.taskread import MAX_TEXT, read_task

FREEZE = "\n".join(f"package{i}=={i}.{i % 7}.{i % 3}" for i in range(100))
TRACEBACK = """Loading a config crashes:
Traceback (most recent call last):
  File "/usr/lib/python3.12/site-packages/shop/cli.py", line 40, in main
    run(load())
  File "/usr/lib/python3.12/site-packages/shop/settings/loader.py", line 12, in read_settings
    raise ConfigError("missing key")
shop.errors.ConfigError: missing key
"""
SHOP = {
    "src/shop/cli.py": "from shop.settings.loader import read_settings\n\n\ndef main():\n    read_settings()\n",
    "src/shop/settings/loader.py": (
        '"""Settings from a file."""\nfrom shop.errors import ConfigError\n\n\n'
        "def read_settings(path='shop.toml'):\n    raise ConfigError('missing key')\n"
    ),
    "src/shop/errors.py": "class ConfigError(Exception):\n    pass\n",
    "src/shop/tls.py": (
        '"""Transport security: certificates and ssl contexts."""\nimport ssl\n\n\n'
        "def context(verify=True):\n    return ssl.create_default_context() if verify else None\n"
    ),
    "src/shop/basket.py": "def total(items):\n    return sum(i.price for i in items)\n",
    "docs/advanced/ssl.md": "# SSL\n\nimport ssl settings, ssl certificates, ssl verify, ssl context: ssl ssl ssl.\n",
    "CHANGELOG.md": "# Changes\n\n- settings loader reads keys; config errors; missing key message.\n",
    "tests/test_loader.py": "from shop.settings.loader import read_settings\n\n\ndef test_read_settings():\n    pass\n",
    "scripts/setup.sh": "#!/bin/sh\n:\n  :\n: ${SHOP_HOME:=/opt/shop}\necho ok\n",
}


@pytest.fixture
def st(tmp_path: Path) -> Settings:
    return load_settings(state_dir=tmp_path / "state", source_timeout=10.0)


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "shop", SHOP)


def files_of(found: object) -> list[str]:
    return [c.hit.path for c in found.considered if c.hit.path]  # type: ignore[attr-defined]


# --- reading the task -------------------------------------------------------------------------


def test_a_pasted_pip_freeze_is_context_not_key_terms() -> None:
    reading = read_task(
        f"ssl verification fails after upgrading\n\npip freeze:\n{FREEZE}\n- Python version: 3.12.1"
    )
    assert reading.dropped == 101
    assert "package7" not in reading.prose
    assert not any(n.startswith("package") for n in reading.names)
    assert "ssl verification fails" in reading.prose


def test_a_traceback_gives_its_frames_files_and_error() -> None:
    reading = read_task(TRACEBACK)
    assert reading.frames == ("main", "read_settings")
    assert "/usr/lib/python3.12/site-packages/shop/settings/loader.py" in reading.paths
    assert "ConfigError" in reading.errors
    assert "missing key" in reading.errors
    assert "shop.errors.ConfigError" in reading.modules
    assert "Traceback" not in reading.prose, "frames are pointers, not prose"


# The same two frames as other tools print them: IPython 8 and 7, pytest's long traceback, pdb.
OTHER_TRACEBACKS = {
    "ipython8": (
        "File ~/venv/lib/python3.12/site-packages/shop/cli.py:40, in main()\n"
        "File ~/venv/lib/python3.12/site-packages/shop/settings/loader.py:12, in Loader.read_settings(path)\n"
    ),
    "ipython7": (
        "~/venv/lib/python3.8/site-packages/shop/cli.py in main()\n"
        "~/venv/lib/python3.8/site-packages/shop/settings/loader.py in read_settings(path)\n"
    ),
    "pytest": (
        "../venv/lib/python3.12/site-packages/shop/cli.py:40: in main\n    run(load())\n"
        "../venv/lib/python3.12/site-packages/shop/settings/loader.py:12: in read_settings\n"
    ),
    "pdb": (
        "  /home/u/venv/lib/python3.12/site-packages/shop/cli.py(40)main()\n-> run(load())\n"
        "  /home/u/venv/lib/python3.12/site-packages/shop/settings/loader.py(12)read_settings()\n"
    ),
}


@pytest.mark.parametrize("tool", sorted(OTHER_TRACEBACKS))
def test_a_traceback_as_other_tools_print_it_gives_the_same_frames(tool: str) -> None:
    reading = read_task(f"Loading a config crashes:\n\n{OTHER_TRACEBACKS[tool]}ConfigError: missing key\n")
    assert reading.frames == ("main", "read_settings")
    assert any(p.endswith("shop/settings/loader.py") for p in reading.paths)
    ranked = rank(reading, _repo(), {"src/shop/errors.py": 5.0, "docs/advanced/ssl.md": 4.0})
    assert ranked[0].path == "src/shop/settings/loader.py"
    assert ranked[0].definitions[0].name == "read_settings"


def test_names_paths_flags_and_imports_are_read_exactly() -> None:
    reading = read_task(
        "`load_dotenv` returns True from flask.cli when SESSION_COOKIE_HTTPONLY is set; see "
        "src/flask/cli.py and run with --extra-files. `from flask.json import dumps`; import ssl"
    )
    assert {"load_dotenv", "SESSION_COOKIE_HTTPONLY", "dumps"} <= set(reading.names)
    assert {"flask.cli", "flask.json", "ssl"} <= set(reading.modules)
    assert "src/flask/cli.py" in reading.paths
    assert "--extra-files" in reading.flags
    assert "returns" not in reading.names, "plain words stay prose"


@pytest.mark.parametrize(
    ("task", "about"),
    [
        ("Fix the token expiry bug and add a test for it", False),
        ("the tests fail on Windows", False),
        ("test_read_settings fails after the upgrade", True),
        ("tests/test_loader.py is flaky", True),
        ("aiter_lines is wrong:\n```python\ntest_httpx = TestHttpx()\n```\n", False),
        (">>> test_client = make()\n>>> test_client.get('/')\nfails", False),
        ("FAILED tests/test_a.py::test_b - AssertionError", True),
    ],
)
def test_saying_test_is_not_a_task_about_tests(task: str, about: bool) -> None:
    assert read_task(task).about_tests is about


@settings(max_examples=60, deadline=None)
@given(
    hyp.text(max_size=3000) | hyp.lists(hyp.sampled_from(list("`'\"()[]{}<>=:.,/\\_- \n\tFile"))).map("".join)
)
def test_reading_any_text_never_raises_and_stays_bounded(text: str) -> None:
    assert "\ud800" not in read_task(text + "\ud800").prose, "a lone surrogate is not UTF-8: replaced"
    reading = read_task(text)
    assert len(reading.prose) <= MAX_TEXT
    assert all(len(group) <= 60 for group in (reading.names, reading.modules, reading.paths, reading.flags))


# --- ranking ----------------------------------------------------------------------------------


def test_kinds_of_files() -> None:
    assert kind_of("src/shop/cli.py") == "source"
    assert kind_of("tests/doors/test_cli.py") == kind_of("pkg/cli_test.py") == "test"
    assert kind_of("docs/advanced/ssl.md") == kind_of("CHANGES.rst") == kind_of("README.md") == "docs"
    assert kind_of(".github/ISSUE_TEMPLATE/bug.md") == "example"
    assert kind_of("requests/packages/urllib3/util.py") == "vendored"
    assert kind_of("pyproject.toml") == "config"


def test_a_file_named_as_another_projects_release_is_vendored() -> None:
    """sphinx keeps ``jquery-3.6.0.js`` beside its own ``searchtools.js``: a release copied in, whose
    many words put it in the top 5 of Python bug reports about HTML."""
    assert kind_of("sphinx/themes/basic/static/jquery-3.6.0.js") == "vendored"
    assert kind_of("sphinx/themes/basic/static/underscore-1.13.1.js") == "vendored"
    assert kind_of("app/static/vue.min.js") == kind_of("x/htmx-v1.9.js") == "vendored"
    assert kind_of("sphinx/themes/basic/static/searchtools.js") == "source"
    assert kind_of("src/shop/py-3.py") == kind_of("src/shop/utils-1a.2.py") == "source"


def _repo() -> Repo:
    return Repo(
        [
            FileFacts("src/shop/tls.py", imports=("ssl",), symbols=(Symbol("context", 5, 6),)),
            FileFacts("docs/advanced/ssl.md"),
            FileFacts("src/shop/errors.py", symbols=(Symbol("ConfigError", 1, 2),)),
            FileFacts("src/shop/settings/loader.py", symbols=(Symbol("read_settings", 5, 6),)),
        ]
    )


def test_import_ssl_means_a_module_never_a_doc_page() -> None:
    ranked = rank(
        read_task("import ssl fails"), _repo(), {"docs/advanced/ssl.md": 9.0, "src/shop/tls.py": 3.0}
    )
    assert ranked[0].path == "src/shop/tls.py"
    assert not any("module named" in why for r in ranked if r.path.endswith(".md") for why in r.reasons)


def test_a_traceback_ranks_its_innermost_repository_frame_with_its_definition() -> None:
    ranked = rank(read_task(TRACEBACK), _repo(), {"src/shop/errors.py": 5.0, "docs/advanced/ssl.md": 4.0})
    assert ranked[0].path == "src/shop/settings/loader.py"
    assert ranked[0].reasons[0].startswith("named: ")
    assert ranked[0].definitions[0].name == "read_settings"


# --- the examples, through ``retrieve`` -------------------------------------------------


def test_a_pasted_pip_freeze_still_gets_an_answer(shop: Path, st: Settings) -> None:
    found = retrieve(
        f"ssl context verify fails\n{FREEZE}", sources=[f"code:{shop}"], max_cycles=1, settings=st
    )
    assert found.candidates
    assert found.candidates[0].hit.path == "src/shop/tls.py"
    assert len(found.key_terms) < 20


def test_a_traceback_points_at_its_file_and_definition(shop: Path, st: Settings) -> None:
    found = retrieve(TRACEBACK, sources=[f"code:{shop}"], max_cycles=1, settings=st)
    best = found.candidates[0]
    assert best.hit.path == "src/shop/settings/loader.py"
    assert best.hit.title == "src/shop/settings/loader.py::read_settings"
    assert (best.hit.start_line, best.hit.end_line) == (5, 6)
    assert best.band == "high"
    assert "CHANGELOG.md" not in files_of(found)[:3], "source files outrank changelogs"


def test_import_ssl_is_not_read_as_the_ssl_doc_page(shop: Path, st: Settings) -> None:
    found = retrieve("After upgrading, import ssl fails in the client", sources=[f"code:{shop}"], settings=st)
    assert files_of(found)[0] == "src/shop/tls.py"
    assert files_of(found).index("docs/advanced/ssl.md") > 0


def test_saying_test_keeps_test_files_out(shop: Path, st: Settings) -> None:
    found = retrieve("Fix read settings missing key and add a test", sources=[f"code:{shop}"], settings=st)
    assert not any(p.startswith("tests/") for p in files_of(found))
    named = retrieve("test_read_settings fails", sources=[f"code:{shop}"], max_cycles=1, settings=st)
    assert "tests/test_loader.py" in files_of(named)


def test_the_answer_is_at_least_limit_long_with_a_band_on_each(shop: Path, st: Settings) -> None:
    found = retrieve("settings loader config error", sources=[f"code:{shop}"], limit=4, settings=st)
    assert len(found.candidates) == 4
    assert all(c.band in ("high", "medium", "low", "none") for c in found.candidates)
    assert [c.band == "high" for c in found.candidates] == [c.relevance >= 0.8 for c in found.candidates]
    assert [c.relevant for c in found.candidates] == [c.relevance >= 0.7 for c in found.candidates]


def test_words_alone_with_a_key_term_uncovered_are_not_the_target(shop: Path, st: Settings) -> None:
    found = retrieve("Add gift wrapping to the basket total", sources=[f"code:{shop}"], settings=st)
    basket = next(c for c in found.considered if c.hit.path == "src/shop/basket.py")
    assert basket.relevance < 0.7, "a file sharing words is related, not 'implements the target'"


def test_one_bad_line_of_one_file_never_breaks_the_index(shop: Path, st: Settings) -> None:
    found = retrieve("read settings from the shop home", sources=[f"code:{shop}"], max_cycles=1, settings=st)
    assert "src/shop/settings/loader.py" in files_of(found)
    assert outline("scripts/setup.sh", SHOP["scripts/setup.sh"]).language == "shell"


def test_seed_example_one_auth_holds_the_bug_tokens_is_related(tmp_path: Path, st: Settings) -> None:
    repo = write_repo(tmp_path / "auth", AUTH_REPO)
    found = retrieve(AUTH_TASK, sources=[f"code:{repo}"], max_cycles=3, settings=st)
    by_path = {c.hit.path: c for c in found.candidates}
    assert files_of(found)[0] == "src/auth/auth.ts"
    assert by_path["src/auth/auth.ts"].relevance >= 0.7, "the file with the bug is in the 0.7+ set"
    assert by_path["src/auth/tokens.ts"].relevance >= 0.5
    assert {"src/auth/session-manager.ts", "src/auth/jwt-utils.ts"} <= set(files_of(found)[:5])
    assert by_path.get("src/models/user.ts") is None or by_path["src/models/user.ts"].relevance < 0.5
    later = {c.hit.path for c in found.considered if c.cycle > 1}
    assert later & {"src/auth/session-manager.ts", "src/auth/jwt-utils.ts"}, "later cycles find the helpers"


# --- hostile files ------------------------------------------------------------------------------

EXTS = [exts[0] for exts in LANGUAGES.values()]


@settings(max_examples=60, deadline=None)
@given(
    hyp.sampled_from(EXTS),
    hyp.text(alphabet=hyp.characters(codec="utf-8"), max_size=400)
    | hyp.lists(
        hyp.sampled_from([":", ";", "{", "(", "=", "<", ",", " ", "\n", "\t", "import", "def", "fn"])
    ).map("".join),
)
def test_the_outline_never_raises_on_hostile_content(ext: str, text: str) -> None:
    found = outline(f"x.{ext}", text)
    assert all(s.start <= s.end for s in found.symbols)


def test_an_index_of_hostile_files_keeps_every_readable_file(tmp_path: Path, st: Settings) -> None:
    files = {f"odd/f{i}.{ext}": body for i, (ext, body) in enumerate(
        (ext, body) for ext in EXTS for body in (":\n", ";;;\n", "{\n(\n", "\x00binary", "def (:\n", "\ufeff:")
    )}  # fmt: skip
    files["src/ok.py"] = "def shipping_label():\n    return 'label'\n"
    repo = write_repo(tmp_path / "hostile", files)
    found = retrieve("shipping label", sources=[f"code:{repo}"], max_cycles=1, settings=st)
    assert files_of(found)[0] == "src/ok.py"


# --- what a bug report names: tests, qualified methods, a pasted script's imports ------------


def _small_repo(files: dict[str, tuple[str, ...]], imports: dict[str, tuple[str, ...]] | None = None) -> Repo:
    imports = imports or {}
    return Repo(
        [
            FileFacts(p, names, imports.get(p, ()), tuple(Symbol(n, 1, 2, n.count(".")) for n in names))
            for p, names in files.items()
        ]
    )


def test_a_named_test_file_or_test_points_at_the_module_it_tests() -> None:
    repo = _small_repo(
        {
            "src/click/termui.py": ("prompt",),
            "src/click/_termui_impl.py": ("pager",),
            "src/click/core.py": ("Command",),
            "tests/test_termui.py": ("test_prompt_suffix",),
        }
    )
    words = {"src/click/core.py": 3.0, "src/click/termui.py": 1.0}  # the prose's words favour core.py
    for task in ("tests/test_termui.py fails on 8.3", "test_prompt_suffix fails since 8.3"):
        ranked = rank(read_task(task), repo, words)
        assert ranked[0].path == "src/click/termui.py", (task, ranked)
        assert any(r.startswith("tested by") for r in ranked[0].reasons)
    plain = rank(read_task("prompt suffix fails since 8.3"), repo, words)
    assert plain[0].path == "src/click/core.py", "no test named: the words decide"


def test_a_named_class_method_counts_for_the_file_defining_it() -> None:
    repo = _small_repo(
        {
            "src/click/formatting.py": ("HelpFormatter", "HelpFormatter.write_usage", "wrap_text"),
            "src/click/core.py": ("Command", "Command.get_usage", "write_usage"),
        }
    )
    words = {"src/click/core.py": 3.0, "src/click/formatting.py": 1.0}
    task = "Empty output from `HelpFormatter.write_usage` for a program without arguments"
    ranked = rank(read_task(task), repo, words)
    assert ranked[0].path == "src/click/formatting.py"
    assert "defines HelpFormatter.write_usage" in ranked[0].reasons
    bare = rank(read_task("Empty output from `write_usage` for a program without arguments"), repo, words)
    assert bare[0].path == "src/click/core.py", "a bare name in the prose is not evidence"


def test_a_pasted_scripts_imports_are_how_it_runs_not_the_bug() -> None:
    repo = _small_repo(
        {"httpx/_models.py": ("Response",), "httpx/_decoders.py": ("LineDecoder",)},
        {"httpx/_models.py": ("json",)},
    )
    words = {"httpx/_decoders.py": 2.0, "httpx/_models.py": 1.9}
    script = "aiter_lines() drops data\n```python\nimport json\nimport httpx\n```\n"
    assert rank(read_task(script), repo, words)[0].path == "httpx/_decoders.py"
    said = "aiter_lines() drops data when the json module decodes it; import json is involved"
    top = rank(read_task(said), repo, words)[0]
    assert top.path == "httpx/_models.py", "named in the prose: it counts"
    assert "imports json" in top.reasons
    assert "requests.__version__" not in read_task(">>> requests.__version__\n'2.22.0'").modules


def test_a_one_part_import_names_a_top_level_module_never_a_nested_namesake() -> None:
    repo = _small_repo(
        {
            "src/_pytest/logging.py": ("LogCaptureFixture",),
            "src/_pytest/mark/structures.py": ("ParameterSet",),
        },
    )
    words = {"src/_pytest/mark/structures.py": 2.0, "src/_pytest/logging.py": 1.0}
    script = "parametrize with an empty list calls ids\n```python\nimport logging\n\nlogging.info(obj)\n```\n"
    top = rank(read_task(script), repo, words)[0]
    assert top.path == "src/_pytest/mark/structures.py", "the stdlib's logging, not _pytest.logging"
    named = rank(read_task("`_pytest.logging` drops records"), repo, words)[0]
    assert named.path == "src/_pytest/logging.py", "the dotted name that imports it still counts"
    flat = _small_repo({"logging.py": ("setup",), "app.py": ("main",)})
    assert rank(read_task("```python\nimport logging\n```"), flat, {"app.py": 1.0})[0].path == "logging.py"


def test_a_reporters_own_test_file_does_not_make_the_task_about_the_repositorys_tests() -> None:
    repo = _small_repo(
        {"src/_pytest/mark/structures.py": ("ParameterSet",), "testing/python/metafunc.py": ("TestMetafunc",)}
    )
    words = {"testing/python/metafunc.py": 3.0, "src/_pytest/mark/structures.py": 2.0}
    mine = "ids callback called with NOTSET\n\n`test_demo.py`\n```python\ndef test_demo(arg):\n    pass\n```"
    reading = read_task(mine)
    assert reading.about_tests
    assert rank(reading, repo, words, about=frozenset({"test"}))[0].path == "src/_pytest/mark/structures.py"
    theirs = read_task("testing/python/metafunc.py fails on an empty parameter list")
    assert rank(theirs, repo, words, about=frozenset({"test"}))[0].path == "testing/python/metafunc.py"


def test_a_pasted_pytest_session_header_is_context_not_key_terms() -> None:
    run = (
        "Unicode ids are escaped\n"
        "============================= test session starts ==============================\n"
        "platform darwin -- Python 3.9.6, pytest-6.1.2, py-1.9.0, pluggy-0.13.1 -- /usr/bin/python3.9\n"
        "cachedir: .pytest_cache\nrootdir: /Users/me/repos/app\nplugins: hypothesis-6.49.1, xdist-2.5.0\n"
        "collected 1 item\n\nplugins: the manager drops hooks registered late\n"
    )
    reading = read_task(run)
    assert reading.dropped == 6
    for word in ("darwin", "cachedir", "rootdir", "session", "collected", "hypothesis"):
        assert word not in reading.prose
    assert "Unicode ids are escaped" in reading.prose
    assert "plugins: the manager drops hooks" in reading.prose, "a sentence that starts alike is prose"


CONFIG_KEY = """`autodoc_preserve_defaults` doesn't work on class methods

Default values for class methods are rendered as their `__repr__`, even with
`autodoc_preserve_defaults = True` in conf.py. The default values of the regular and static methods
render correctly as `SOME_DEFAULT`.
"""
BUSY = '    """autodoc: preserve the defaults of class methods, static methods; default values render repr"""'


def test_a_name_the_task_quotes_points_at_the_one_source_file_holding_it(
    tmp_path: Path, st: Settings
) -> None:
    """A config key is no definition (``app.add_config_value('autodoc_preserve_defaults', ...)``): the
    one source file holding it word for word counts, however many more words other files share."""
    files = {
        "ext/autodoc/hooks.py": (
            "def update(app, obj):\n    if app.config.autodoc_preserve_defaults:\n        pass\n\n\n"
            "def setup(app):\n    app.add_config_value('autodoc_preserve_defaults', False, True)\n"
        ),
        "ext/autodoc/__init__.py": "\n".join(f"def method_{i}(obj):\n{BUSY}\n" for i in range(30)),
        "ext/autodoc/directive.py": f"def run(self):\n{BUSY}\n",
        "docs/usage/autodoc.rst": "autodoc_preserve_defaults\n   default values of class methods\n",
    }
    root = write_repo(tmp_path / "repo", files)
    assert verbatim_strings(read_task(CONFIG_KEY)) == ["autodoc_preserve_defaults", "SOME_DEFAULT"]
    source = CodeSource("code", CodeOptions(path=root), st)
    try:
        ranked = asyncio.run(source.locate(read_task(CONFIG_KEY)))
    finally:
        asyncio.run(source.aclose())
    assert ranked[0].path == "ext/autodoc/hooks.py", ranked[:3]
    assert "holds 'autodoc_preserve_defaults'" in ranked[0].reasons


def test_a_name_many_files_hold_points_nowhere() -> None:
    repo = _small_repo({"src/a.py": ("f",), "src/b.py": ("g",)})
    words = {"src/a.py": 3.0, "src/b.py": 1.0}
    task = read_task("`SESSION_COOKIE_HTTPONLY` is ignored")
    held_by_one = rank(task, repo, words, verbatim={"SESSION_COOKIE_HTTPONLY": {"src/b.py", "docs/x.md"}})
    assert held_by_one[0].path == "src/b.py"
    held_by_two = rank(task, repo, words, verbatim={"SESSION_COOKIE_HTTPONLY": {"src/a.py", "src/b.py"}})
    assert held_by_two[0].path == "src/a.py", "held by two source files: the words decide"


def test_a_test_named_by_its_area_and_module_points_at_that_module() -> None:
    """sphinx names tests ``test_build_latex.py``, ``test_ext_autodoc.py``: the area first, so the
    module is the name's end (``latex``), or a package (``autodoc/__init__.py``), not ``build.py``."""
    repo = _small_repo(
        {
            "sphinx/cmd/build.py": ("main",),
            "sphinx/writers/latex.py": ("LaTeXTranslator",),
            "sphinx/ext/autodoc/__init__.py": ("Documenter",),
            "tests/test_build_latex.py": ("test_latex_code_role",),
            "tests/test_ext_autodoc.py": ("test_autodoc",),
        }
    )
    words = {"sphinx/cmd/build.py": 3.0}
    latex = rank(read_task("Your project: extracted from tests/test_build_latex.py"), repo, words)
    assert [r.path for r in latex if any(w.startswith("tested by") for w in r.reasons)] == [
        "sphinx/writers/latex.py"
    ]
    autodoc = rank(read_task("tests/test_ext_autodoc.py fails"), repo, words)
    assert autodoc[0].path == "sphinx/ext/autodoc/__init__.py"


def test_a_package_the_task_names_lifts_its_modules() -> None:
    """``sphinx.ext.autosummary`` names a package: its ``__init__`` most, and its own modules (where
    the bug often is: ``generate.py``) above a file the words alone favour."""
    repo = _small_repo(
        {
            "sphinx/ext/autosummary/__init__.py": ("process_generate_options",),
            "sphinx/ext/autosummary/generate.py": ("generate_autosummary_docs",),
            "sphinx/application.py": ("Sphinx",),
        }
    )
    words = {"sphinx/application.py": 1.5, "sphinx/ext/autosummary/generate.py": 1.0}
    task = read_task("Extension error (sphinx.ext.autosummary): source is not a .py file")
    ranked = [r.path for r in rank(task, repo, words)]
    assert ranked[:2] == ["sphinx/ext/autosummary/__init__.py", "sphinx/ext/autosummary/generate.py"]
    plain = [r.path for r in rank(read_task("Extension error: source is not a .py file"), repo, words)]
    assert plain[0] == "sphinx/application.py", "no package named: the words decide"
