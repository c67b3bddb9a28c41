"""What of a bug report is the reporter's own (issue 25): an issue template's scaffolding and its
sections on the reporter's setup are context, not key terms, and a traceback frame in another package
only ran the code (the retrieve benchmark's tuning tasks: ``### Sphinx extensions`` listing
``sphinx.ext.autodoc`` lifted that package over the file to change; ``click/core.py``'s ``invoke``
lifted every file of the repository defining one)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as hyp

from sourcewise.sources.code.locate import FileFacts, Repo, rank
from sourcewise.sources.code.outline import Symbol
from sourcewise.sources.code.taskread import read_task
from sourcewise.text.analyze import analyze

REPORT = """Overloaded default values rendered as string literal

**Is your feature request related to a problem? Please describe.**

- [x] a detailed description of the bug or problem you are having

### Describe the bug

Default arguments of overloaded functions render as a quoted literal.

```python
# a comment in the reporter's script is code, kept
def area(width=3): ...
```

### Python version

3.8.3

### Sphinx extensions

'sphinx.ext.autodoc', 'sphinx.ext.napoleon'

```
sphinx_rtd_theme==1.0
```

### Additional context

Posted first on the theme's tracker.
"""


def test_an_issue_templates_scaffolding_and_setup_sections_are_context() -> None:
    reading = read_task(REPORT)
    words = set(analyze(reading.prose))
    for scaffold in ("feature", "request", "describe", "bug", "detailed", "version", "extensions"):
        assert scaffold not in words, scaffold
    assert not any(m.startswith("sphinx") for m in reading.modules), "the setup's extensions are context"
    assert "sphinx_rtd_theme" not in reading.names, "a fenced dump inside a setup section is context too"
    assert "3.8.3" not in reading.prose
    assert "Default arguments of overloaded functions" in reading.prose
    assert "# a comment in the reporter's script" in reading.prose, (
        "a comment in fenced code is not a heading"
    )
    assert "Posted first on the theme's tracker" in reading.prose, (
        "the setup section ends at the next heading"
    )
    assert reading.dropped >= 10


def test_a_longer_heading_that_mentions_the_setup_opens_no_context_section() -> None:
    text = "Crash on save\n\n## Steps to reproduce on a Linux system\n\nCall `save(path)` twice.\n"
    reading = read_task(text)
    assert "Call `save(path)` twice." in reading.prose
    assert "save" in reading.names
    assert "Linux" not in reading.prose, "the heading itself is scaffolding"


def test_a_title_and_prose_without_a_template_are_read_whole() -> None:
    text = "Overloaded defaults render as literals\n\n**Note** that `area(width=3)` shows `width='3'`."
    reading = read_task(text)
    assert reading.dropped == 0
    assert "Note" in reading.prose, "a bold word inside a sentence is prose"


TRACE = """Serving crashes with a recursion error
Traceback (most recent call last):
  File "/home/me/.venv/lib/python3.12/site-packages/click/core.py", line 764, in invoke
    return callback(*args, **kwargs)
  File "/home/me/.venv/lib/python3.12/site-packages/shop/settings/loader.py", line 12, in read_settings
    raise RecursionError()
RecursionError: maximum recursion depth exceeded
"""


def _repo() -> Repo:
    return Repo(
        [
            FileFacts("src/shop/cli.py", symbols=(Symbol("invoke", 1, 2),)),
            FileFacts("src/shop/settings/loader.py", symbols=(Symbol("read_settings", 5, 6),)),
            FileFacts("src/shop/basket.py", symbols=(Symbol("total", 1, 2),)),
        ]
    )


def test_a_frame_in_another_package_does_not_point_at_the_repositorys_namesake() -> None:
    reading = read_task(TRACE)
    assert ("/home/me/.venv/lib/python3.12/site-packages/click/core.py", "invoke") in reading.framed
    ranked = {r.path: r for r in rank(reading, _repo(), {"src/shop/cli.py": 1.0, "src/shop/basket.py": 1.0})}
    assert not any("invoke" in why for why in ranked["src/shop/cli.py"].reasons)
    assert ranked["src/shop/cli.py"].score == ranked["src/shop/basket.py"].score
    loader = ranked["src/shop/settings/loader.py"]
    assert "defines read_settings (a traceback frame)" in loader.reasons, "a frame in the repository counts"


def test_a_frame_at_the_repositorys_root_counts() -> None:
    reading = read_task(
        'Traceback (most recent call last):\n  File "/x/site-packages/black.py", line 3, in fmt\n'
    )
    repo = Repo([FileFacts("black.py", symbols=(Symbol("fmt", 1, 2),)), FileFacts("other.py")])
    assert any("fmt (a traceback frame)" in why for why in rank(reading, repo, {})[0].reasons)


@given(hyp.text(alphabet="#*-[]x `\n\tabc OS:", max_size=400))
def test_reading_template_like_text_never_raises(text: str) -> None:
    reading = read_task(text)
    assert reading.dropped <= text.count("\n") + 1


@pytest.mark.parametrize(
    ("report", "names"),
    [
        # a heading that names more than a setup word is the reporter's own words
        ("## os.walk follows symlinks\n\nThe helper `walk_tree` calls `_scan_dir` forever.", ["walk_tree", "_scan_dir"]),
        ("### Version 2.0 regression\n\n`register_blueprint` fails when called twice.", ["register_blueprint"]),
        ("## Platform-specific crash\n\n`get_terminal_size` returns 0.", ["get_terminal_size"]),
        # a setup section ends at the blank line after what it says
        ("**Versions**\nsphinx 5.0\n\nI think the bug is in ClassDocumenter.format_args.", ["format_args"]),
        # a comment indented four spaces is code, not a heading
        ("Repro:\n\n    # platform check\n    result = compute_layout(1)\n\nand `compute_layout` fails.",
         ["compute_layout"]),
        # a bold line with code in it is the summary, not the template's
        ("**`Session.merge_environment_settings` drops proxies**\n\nsee above", ["merge_environment_settings"]),
    ],
)  # fmt: skip
def test_what_only_looks_like_a_templates_setup_is_kept(report: str, names: list[str]) -> None:
    """Found in review: each of these lost all its names to the setup and scaffolding rules."""
    found = read_task(report).names
    assert all(n in found for n in names), found


def test_a_frame_in_another_packages_folder_of_the_same_name_does_not_count() -> None:
    """``numpy/core/fromnumeric.py`` is not the repository's ``xarray/core``: a folder below the
    top counts with the folder it sits in (found in review); ``site-packages/xarray/core/...``
    and the repository's own ``xarray/core/...`` still do."""
    repo = Repo([
        FileFacts("xarray/core/dataset.py", symbols=(Symbol("_wrapfunc", 1, 2), Symbol("reduce", 3, 4))),
        FileFacts("xarray/plot.py"),
    ])  # fmt: skip
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/dist-packages/numpy/core/fromnumeric.py", line 3, in _wrapfunc\n'
        '  File "/home/me/.venv/lib/python3.12/site-packages/xarray/core/dataset.py", line 9, in reduce\n'
    )
    reasons = rank(read_task(trace), repo, {})[0].reasons
    assert "defines reduce (a traceback frame)" in reasons
    assert not any("_wrapfunc (a traceback frame)" in why for why in reasons), reasons
