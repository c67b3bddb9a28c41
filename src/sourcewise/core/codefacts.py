"""What a source file defines and imports, read line by line without a parser.

Used by the refinement loop (seed 004) to tell a file that *defines* a task's concept from one that
only *uses* it, and to learn vocabulary from the modules a relevant file imports. Covers the common
shapes of Python, JavaScript/TypeScript, Go, Rust, Java/Kotlin/C#, Ruby and PHP well enough for
ranking; a miss costs a little relevance, never a wrong answer.

Pure and linear: one pass per line, no regular expressions.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["defined_names", "imported_modules", "module_parts", "path_parts", "resolves_to"]

MAX_LINES = 20_000  # files longer than this are read for their head only
DEFINERS = (
    "async def ", "def ", "class ", "function ", "async function ", "func ", "fn ", "pub fn ",
    "pub async fn ", "pub struct ", "struct ", "pub enum ", "enum ", "trait ", "pub trait ", "impl ",
    "interface ", "type ", "module ", "object ", "record ", "const ", "let ", "var ", "export const ",
    "export function ", "export async function ", "export class ", "export default class ",
    "export default function ", "export interface ", "export type ", "public class ", "class ",
    "public interface ", "abstract class ", "public abstract class ", "data class ", "fun ",
)  # fmt: skip
INDEX_STEMS = frozenset({"__init__", "index", "mod", "main", "lib"})
SUFFIX_SEP = "."


def _ident(text: str) -> str:
    out: list[str] = []
    for ch in text:
        if ch.isalnum() or ch in "_$":
            out.append(ch)
        elif out:
            break
        elif ch not in "*&( ":
            break
    return "".join(out)


def defined_names(text: str) -> list[str]:
    """Names of the functions, classes, types and top-level constants ``text`` defines, in order."""
    found: dict[str, None] = {}
    for line in text.splitlines()[:MAX_LINES]:
        stripped = line.lstrip()
        for prefix in DEFINERS:
            if stripped.startswith(prefix):
                name = _ident(stripped[len(prefix) :])
                if name and not name[0].isdigit():
                    found.setdefault(name, None)
                break
        else:
            head, sep, _ = stripped.partition("=")
            # top-level ``NAME = ...`` (Python constants and module attributes)
            if sep and line == stripped and head.strip().isidentifier() and not _.startswith("="):
                found.setdefault(head.strip(), None)
    return list(found)


def _quoted(text: str) -> str:
    for quote in ("'", '"', "`"):
        start = text.find(quote)
        if start >= 0:
            end = text.find(quote, start + 1)
            if end > start:
                return text[start + 1 : end]
    return ""


def _python_import(stripped: str) -> list[str]:
    if stripped.startswith("import "):
        names = stripped[7:].split("#")[0]
        return [n.split(" as ")[0].strip() for n in names.split(",") if n.strip()]
    module, sep, names = stripped[5:].partition(" import ")
    if not sep:
        return []
    module = module.strip()
    items = [n.split(" as ")[0].strip(" ()\\") for n in names.split("#")[0].split(",")]
    if module.strip("."):
        return [module]
    # ``from . import name``: the names are the sibling modules
    return [f"{module}{n}" for n in items if n.isidentifier()]


def imported_modules(text: str) -> list[str]:
    """Modules ``text`` imports, as written (``app.middleware.throttle``, ``./throttle``, ``.x``)."""
    found: dict[str, None] = {}
    for line in text.splitlines()[:MAX_LINES]:
        stripped = line.strip()
        names: list[str] = []
        if stripped.startswith(("import ", "from ")) and " from " not in stripped:
            names = _python_import(stripped)
        if not names and ("import " in stripped or "require(" in stripped or stripped.startswith("use ")):
            target = _quoted(stripped) or (stripped[4:].rstrip(";").strip() if stripped.startswith("use ") else "")
            names = [target] if target else []
        for name in names:
            if name and len(name) < 200:
                found.setdefault(name, None)
    return list(found)


def module_parts(module: str) -> list[str]:
    """``app.middleware.throttle`` / ``../middleware/throttle`` / ``crate::a::b`` -> name parts."""
    cleaned = module.replace("::", "/").replace("\\", "/")
    sep = "/" if "/" in cleaned else "."
    return [p for p in cleaned.split(sep) if p and p not in (".", "..", "@", "crate", "self", "super")]


def path_parts(path: str) -> list[str]:
    """``src/app/middleware/throttle.py`` -> ``["src", "app", "middleware", "throttle"]``
    (``__init__``/``index`` files stand for their folder)."""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    if parts:
        stem = parts[-1].split(SUFFIX_SEP)[0]
        parts[-1] = stem
        if stem in INDEX_STEMS and len(parts) > 1:
            parts.pop()
    return parts


def resolves_to(module: str, paths: Iterable[str]) -> list[str]:
    """The paths ``module`` may name: the path's parts end with the module's parts."""
    want = module_parts(module)
    if not want:
        return []
    out: list[str] = []
    for path in paths:
        have = path_parts(path)
        n = min(len(want), len(have))
        if n and have[-n:] == want[-n:] and (n == len(want) or n >= 2 or len(want) == 1):
            out.append(path)
    return out
