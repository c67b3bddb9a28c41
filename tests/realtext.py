"""Real text nobody here wrote, for tests that check a rule over it (read once per process)."""

from __future__ import annotations

import ast
import sysconfig
from functools import cache
from pathlib import Path


@cache  # read once for the tests that share it
def real_paragraphs() -> list[str]:
    """Paragraphs of documentation nobody here wrote: the standard library's docstrings (20 modules:
    parsing them is most of the cost) and, when installed, Vim's help and the text files under
    /usr/share/doc (Greek, Cyrillic, CJK among them)."""
    texts: list[str] = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[:20]:
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        nodes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.Module)]
        texts.extend(d for n in nodes if (d := ast.get_docstring(n)))
    for pattern in ("/usr/share/vim/vim*/doc/*.txt", "/usr/share/doc/*/*.txt", "/usr/share/doc/*/README*"):
        for path in sorted(Path("/").glob(pattern.lstrip("/")))[:300]:
            if path.is_file() and path.stat().st_size < 2_000_000:
                texts.append(path.read_text("utf-8", "replace"))
    return [p for t in texts for p in t.split("\n\n") if p.strip()]


def spread(items: list[str], count: int) -> list[str]:
    """About ``count`` of ``items`` spread evenly over them, a quarter of them from the items that
    are not ASCII (Greek, Cyrillic, CJK: about 3% of the real text, the rarest and hardest cases):
    a differential check reads a few hundred real inputs, not tens of thousands."""
    ascii_ = [t for t in items if t.isascii()]
    other = [t for t in items if not t.isascii()]
    wide = count // 4 if other else 0
    return _even(ascii_, count - wide) + _even(other, wide)


def _even(items: list[str], count: int) -> list[str]:
    return items[:: max(1, len(items) // count)][:count] if count > 0 else []
