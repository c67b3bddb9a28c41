"""The documentation sets of the answer benchmark, rebuilt from where they live on this machine.

Nothing here is committed: each set is copied (or rendered) into a cache folder on first use and
skipped, with the reason, when its origin is absent.

| set | origin | what |
|---|---|---|
| ``httpx`` | ``fetch`` mirror of encode/httpx, ``docs/`` (``git archive``) | English library docs (MkDocs) |
| ``fastapi-ko`` | ``fetch`` mirror of fastapi/fastapi, ``docs/ko/docs/`` | Korean library docs (MkDocs) |
| ``rust-book`` | ``fetch`` mirror of rust-lang/book, ``src/`` | English book (mdBook) |
| ``pdf`` | Debian: ``/usr/share/doc/bzip2/manual.pdf.gz``, ``fontconfig/fontconfig-user.pdf.gz``, ``shared-mime-info/shared-mime-info-spec.pdf`` | PDFs as Debian ships them |
| ``man`` | Debian man pages (``grep``, ``sed``, ``tar``, ``find``, ``gzip``, ``xargs``, ``sort``, ``diff``), rendered to text by ``man -l`` | a reference manual |
"""

from __future__ import annotations

import gzip
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

MIRROR = Path("/work/.mirror")
CACHE = Path(tempfile.gettempdir()) / "sourcewise-bench" / "answer-docs"
GIT_SETS = {
    "httpx": ("encode+httpx", "docs", (".md",)),
    "fastapi-ko": ("fastapi+fastapi", "docs/ko/docs", (".md",)),
    "rust-book": ("rust-lang+book", "src", (".md",)),
}
PDFS = (
    "/usr/share/doc/bzip2/manual.pdf.gz",
    "/usr/share/doc/fontconfig/fontconfig-user.pdf.gz",
    "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf",
)
MAN_PAGES = ("grep", "sed", "tar", "find", "gzip", "xargs", "sort", "diff")


def _git_dir(repo: str) -> Path | None:
    folder = MIRROR / repo
    for candidate in (folder / "repo", folder):
        if (candidate / "HEAD").exists() or (candidate / ".git").exists():
            return candidate
    return None


def _from_git(name: str, out: Path) -> str | None:
    repo, sub, exts = GIT_SETS[name]
    git = _git_dir(repo)
    if git is None:
        return f"{repo} is not mirrored (use the fetch tool: github:{repo.replace('+', '/')})"
    raw = subprocess.run(
        ["git", "--git-dir", str(git), "archive", "--format=tar", "HEAD", sub],
        capture_output=True,
        check=False,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(CACHE)},
    )
    if raw.returncode:
        return f"git archive failed: {raw.stderr.decode(errors='replace')[:200]}"
    with tarfile.open(fileobj=io.BytesIO(raw.stdout)) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(exts):
                data = tar.extractfile(member)
                if data is None:
                    continue
                target = out / member.name[len(sub) + 1 :]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data.read())
    return None


def _pdfs(out: Path) -> str | None:
    found = 0
    for src in map(Path, PDFS):
        if not src.exists():
            continue
        name = src.name.removesuffix(".gz")
        data = gzip.decompress(src.read_bytes()) if src.suffix == ".gz" else src.read_bytes()
        (out / name).write_bytes(data)
        found += 1
    return None if found else "no Debian PDF found"


def _man(out: Path) -> str | None:
    man = shutil.which("man")
    if man is None:
        return "man is not installed"
    found = 0
    for page in MAN_PAGES:
        src = Path(f"/usr/share/man/man1/{page}.1.gz")
        if not src.exists():
            continue
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "MANWIDTH": "100", "LC_ALL": "C.UTF-8"}
        text = subprocess.run(
            [man, "-l", "-P", "cat", "-E", "UTF-8", str(src)], capture_output=True, check=False, env=env
        ).stdout.decode("utf-8", "replace")
        # man renders bold and underline with backspaces; col -b in Python.
        plain = []
        for ch in text:
            if ch == "\b":
                if plain:
                    plain.pop()
            else:
                plain.append(ch)
        (out / f"{page}.txt").write_text("".join(plain), "utf-8")
        found += 1
    return None if found else "no man page found"


def build(name: str) -> tuple[Path | None, str]:
    """The set's folder (built on first use) and a note; ``None`` and the reason when absent."""
    out = CACHE / name
    if out.exists() and any(out.rglob("*.*")):
        return out, "cached"
    tmp = CACHE / f".{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    reason = _from_git(name, tmp) if name in GIT_SETS else _pdfs(tmp) if name == "pdf" else _man(tmp)
    if reason is not None:
        shutil.rmtree(tmp, ignore_errors=True)
        return None, reason
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out, "built"
