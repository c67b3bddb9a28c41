"""Issue 25: the loop earns its later cycles. Its second look re-ranks the first cycle's files by
their best passage: a hub module holding the task's words scattered over many definitions falls
below the file holding them together in the definition to change."""

from __future__ import annotations

from pathlib import Path

from sourcewise import retrieve
from sourcewise.config import load_settings

TASK = "Footnote marks point to the wrong footnote when documents use the same footnote label"
WORDS = ["footnote", "marks", "wrong", "documents", "same", "label"]


def _write(root: Path) -> Path:
    """``pkg/hub.py``: six definitions, each with two of the task's words; ``pkg/writer.py``: the
    words together in one definition among longer unrelated ones."""
    (root / "pkg").mkdir(parents=True)
    hub = "".join(
        f'def step_{i}(value):\n    """Handle the {w} of a {WORDS[(i + 1) % 6]} here."""\n'
        + "    value = value + 1\n" * 30
        + "    return value\n\n"
        for i, w in enumerate(WORDS)
    )
    (root / "pkg" / "hub.py").write_text(hub, "utf-8")
    filler = "".join(f"def helper_{i}(x):\n" + "    x = x * 2\n" * 30 + "    return x\n\n" for i in range(6))
    target = (
        'def visit_footnote_mark(node, documents):\n    """The footnote marks of documents that use the same\n'
        '    label point to the wrong footnote: number them per document."""\n    return node\n\n'
    )
    (root / "pkg" / "writer.py").write_text(filler + target + filler.replace("helper_", "more_"), "utf-8")
    for name in ("a", "b", "c"):
        (root / "pkg" / f"{name}.py").write_text(f"def {name}():\n    return 1\n", "utf-8")
    return root


def test_the_second_look_puts_the_passage_about_the_task_above_a_hub(tmp_path: Path) -> None:
    root = _write(tmp_path / "repo")
    st = load_settings(state_dir=tmp_path / "state")
    one = retrieve(TASK, sources=[f"code:{root}"], max_cycles=1, limit=5, settings=st)
    loop = retrieve(TASK, sources=[f"code:{root}"], max_cycles=3, limit=5, settings=st)
    assert [c.hit.path for c in one.considered][:2] == ["pkg/hub.py", "pkg/writer.py"]
    assert [c.hit.path for c in loop.considered][:2] == ["pkg/writer.py", "pkg/hub.py"]
    assert len(loop.cycles) >= 2
    assert "its best passage" in loop.considered[0].reason
