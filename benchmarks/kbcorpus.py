"""Real text for the knowledge-base benchmark: paragraphs of the documentation installed on this machine.

Python docstrings from site-packages, Vim help, man pages (troff source with its markup stripped, every
language installed: Cyrillic, Greek, CJK and Korean pages come along), info pages and the text files
under /usr/share/doc. Paragraphs are kept as they are (odd characters too), deduplicated, cut at 3,000
characters, and written as Markdown files of up to 20 paragraphs, each under its own heading, so the
knowledge base cuts exactly one chunk per paragraph and the references index the same paragraphs.

The corpus lives in a cache folder outside the repository and is rebuilt by ``build(n)``; a corpus
larger than the machine's unique paragraphs repeats them in new files (said in the output).
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import re
import site
from collections.abc import Iterator
from pathlib import Path

PER_FILE = 20
MAX_CHARS = 3000
MIN_CHARS = 60
_TROFF_ESCAPE = re.compile(r"\\f[BIRP]|\\f\(..|\\\*\(..|\\\*.|\\\(..|\\[&|^%-]|\\s[+-]?\d")
_SPACES = re.compile(r"[ \t]+")


def _paragraphs(text: str) -> Iterator[str]:
    for block in re.split(r"\n\s*\n", text):
        para = _SPACES.sub(" ", block.strip())
        if len(para) >= MIN_CHARS and sum(c.isalpha() for c in para) > len(para) // 3:
            if len(para) > MAX_CHARS:
                para = para[:MAX_CHARS].rsplit(" ", 1)[0]
            # A heading marker at a line start would turn a paragraph into a heading.
            yield re.sub(r"(?m)^\s*#+", "", para).strip()


def _read(path: Path) -> str:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError):
            return ""
    return raw.decode("utf-8", "replace")


def _man(text: str) -> str:
    lines = []
    for line in text.splitlines():
        if line.startswith((".", "'")):
            if line[:3] in (".PP", ".LP", ".P", ".SH", ".SS", ".TP", ".IP") or line[:2] == ".P":
                lines.append("")
            elif line[:3] in (".B ", ".I ") or line[:4] in (".BR ", ".IR ", ".BI ", ".RB "):
                lines.append(line.split(" ", 1)[1].replace('"', ""))
            continue
        lines.append(_TROFF_ESCAPE.sub("", line))
    return "\n".join(lines)


def _docstrings(path: Path) -> str:
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError, RecursionError):
        return ""
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef))]
    return "\n\n".join(d for n in nodes if (d := ast.get_docstring(n)))  # type: ignore[arg-type]


def _sources() -> Iterator[tuple[str, str]]:
    """(document name, its text), each kind of documentation in turn."""
    for path in sorted(Path("/usr/share/vim").glob("vim*/doc/*.txt")):
        yield f"vim {path.stem}", _read(path)
    for path in sorted(Path("/usr/share/man").rglob("*.gz")):
        yield f"man {path.name.removesuffix('.gz')}", _man(_read(path))
    for path in sorted(Path("/usr/share/info").glob("*.gz")):
        yield f"info {path.name.split('.')[0]}", _read(path)
    for path in sorted(Path("/usr/share/doc").rglob("*")):
        if (
            path.is_file()
            and path.suffix in ("", ".gz", ".txt", ".md", ".rst")
            and "copyright" not in path.name
        ):
            yield f"doc {path.parent.name} {path.name}", _read(path)
    for root in site.getsitepackages():
        for path in sorted(Path(root).rglob("*.py")):
            yield f"py {path.relative_to(root).with_suffix('')}".replace("/", "."), _docstrings(path)


def unique_paragraphs(limit: int) -> Iterator[tuple[str, str]]:
    seen: set[bytes] = set()
    count = 0
    for name, text in _sources():
        for para in _paragraphs(text):
            key = hashlib.blake2b(para.encode(), digest_size=8).digest()
            if key not in seen:
                seen.add(key)
                yield name, para
                count += 1
                if count >= limit:
                    return


def build(n: int, cache: Path) -> tuple[Path, str]:
    """A folder of Markdown files holding ``n`` paragraphs, and a note on what it holds."""
    folder = cache / f"real-{n}"
    note_file = folder / "done"
    if note_file.exists():
        return folder, note_file.read_text()
    folder.mkdir(parents=True, exist_ok=True)
    paras = list(unique_paragraphs(n))
    unique = len(paras)
    picked = [paras[i % unique] for i in range(n)]
    for f in range(0, n, PER_FILE):
        copy = f // unique
        _write(
            folder / f"c{copy}" / f"{f // (PER_FILE * 1000):04d}" / f"f{f // PER_FILE}.md",
            picked[f : f + PER_FILE],
        )
    note = f"{n:,} paragraphs ({unique:,} unique{', repeated in new files' if unique < n else ''})"
    note_file.write_text(note)
    return folder, note


def _write(path: Path, batch: list[tuple[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = [f"# {batch[0][0]}\n"]
    for i, (name, para) in enumerate(batch):
        body.append(f"## {name} ({i + 1})\n\n{para}\n")
    path.write_text("\n".join(body), "utf-8")


def chunks_of(folder: Path) -> Iterator[tuple[str, str, str]]:
    """(file title, heading, paragraph) of every file under ``folder``: what the references index."""
    for path in sorted(folder.rglob("*.md")):
        yield from chunks_of_file(path)


def chunks_of_file(path: Path) -> Iterator[tuple[str, str, str]]:
    text = path.read_text("utf-8")
    title = text.split("\n", 1)[0][2:]
    for part in text.split("\n## ")[1:]:
        heading, _, para = part.partition("\n\n")
        yield title, heading, para.strip()
