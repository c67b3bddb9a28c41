"""What a file's path says: its kind (``source``, ``test``, ``docs``, ...), which file an import
names (module and path parts, for the refinement loop's import graph), and which module a name of
the task spells (``autodoc_typehints`` -> ``autodoc/typehints.py``).

``sources/code/outline.py`` reads what a file imports (``app.middleware.throttle``, ``./throttle``,
``.throttle``); these helpers tell which of the files found so far such a module may be, so a file
imported by a relevant file is seen as related. Pure and linear, no regular expressions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

__all__ = ["kind_of", "module_parts", "path_parts", "resolves_to", "spelled_by"]

INDEX_STEMS = frozenset({"__init__", "index", "mod", "main", "lib"})
# a host (``docs.python.org``) or a file (``para.html``) is not a name of the code
NOT_CODE = frozenset(
    {"www", "http", "https", "html", "htm", "org", "com", "net", "io", "rst", "md", "txt", "json", "xml",
     "yml", "yaml", "toml", "cfg", "ini", "py", "pyi", "png", "jpg", "svg", "so", "log", "js", "css", "gz"}
)  # fmt: skip
SUFFIX_SEP = "."
SOURCE_EXTS = frozenset(
    {"py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "tsx", "mts", "cts", "go", "rs", "java", "kt", "kts",
     "scala", "cs", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "rb", "php", "swift", "sh", "bash"}
)  # fmt: skip
DOC_NAMES = ("changes", "changelog", "history", "news", "readme", "contributing", "authors", "license")


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


def _words(name: str) -> list[str]:
    """``autodoc_typehints`` / ``xr.concat`` / ``--line-ranges`` -> its lower-case words."""
    out, word = [], []
    for c in name.lower():
        if c.isalnum():
            word.append(c)
        elif word:
            out.append("".join(word))
            word = []
    return [*out, "".join(word)] if word else out


def spelled_by(names: Iterable[str], paths: Iterable[str], most: int = 2) -> dict[str, tuple[str, bool]]:
    """Files whose module name a name the task uses spells out: a config key ``autodoc_typehints``
    -> ``autodoc/typehints.py`` (module and folder), an alias's ``xr.concat`` -> ``concat.py``, a
    flag ``--line-ranges`` -> ``ranges.py``. The module's words must run inside the name's and the
    name must say more than the module (a bare ``concat`` is a word of the prose); a snake_case name
    must spell the folder too (``attachment_types`` is no pointer at ``types.py``); a dotted name
    spells its last part, and not when its first part is a module of the repository
    (``httpx.Client``, ``app.config``: the module hits read those); hosts, file names and dunders
    spell nothing. The module name is at least 4 letters and held by at most ``most`` files, never
    the package itself. Maps each file to (the name, whether its folder is spelled too)."""
    stems: dict[str, list[str]] = defaultdict(list)
    known: set[str] = set()  # every module's name, the packages' too
    for path in paths:
        parts = path_parts(path)
        known.update(p.lstrip("_") for p in parts[-1:])
        if len(parts) - (parts[:1] in (["src"], ["lib"])) > 1:  # the package itself: every name of it
            stems[parts[-1].lstrip("_")].append(path)
    out: dict[str, tuple[str, bool]] = {}
    for name in names:
        words = _words(name)
        if not words or words[-1] in NOT_CODE or not NOT_CODE.isdisjoint(words[:1]) or name.endswith("__"):
            continue  # a host, a file name or a dunder (``__attrs_pre_init__``) spells no module
        dotted, flag = "." in name, name.startswith("-")
        if dotted and words[0] in known:
            continue
        ends = range(len(words) if dotted else 1, len(words) + 1)
        runs = {"_".join(words[i:j]) for j in ends for i in range(max(0, j - 4), j)}
        for stem in runs:
            files = stems.get(stem, [])
            if len(stem) < 4 or len(files) > most or stem.count("_") + 1 >= len(words):
                continue
            for path in files:
                folder = path_parts(path)[-2:-1]
                spelled = not dotted and bool(folder) and folder[0].lstrip("_") in words
                if (spelled or dotted or flag) and (path not in out or (spelled and not out[path][1])):
                    out[path] = (name, spelled)
    return out


def kind_of(path: str) -> str:
    """``source``, ``test``, ``docs``, ``vendored``, ``example`` or ``config`` by the path alone."""
    low = path.replace("\\", "/").lower()
    parts = low.split("/")
    name = parts[-1]
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    if any(p in ("tests", "test", "testing", "__tests__") for p in parts[:-1]) or name.startswith("test_"):
        return "test"
    if name.endswith(("_test.py", ".test.js", ".test.ts", ".spec.ts", ".spec.js")) or name == "conftest.py":
        return "test"
    if any(p in ("docs", "doc", "documentation") for p in parts[:-1]) or name.startswith(DOC_NAMES):
        return "docs"
    if any(p in ("vendor", "_vendor", "vendored", "third_party", "packages") for p in parts[:-1]):
        return "vendored"  # another project's code kept in the tree: rarely what a change is for
    if _released(name):
        return "vendored"  # ``jquery-3.6.0.js``, ``x.min.js``: another project's release, copied in
    if any(p in ("examples", "example", "samples", ".github", "scripts") for p in parts[:-1]):
        return "example"
    if ext in SOURCE_EXTS and name not in ("setup.py", "noxfile.py", "conftest.py"):
        return "source"
    return "docs" if ext in ("md", "rst", "txt", "adoc") else "config"


def _released(name: str) -> bool:
    """A file named as another project's release: a version after its last dash, or minified."""
    stem = name.rsplit(".", 1)[0]
    if stem.endswith(".min"):
        return True
    version = stem.rsplit("-", 1)[-1].removeprefix("v") if "-" in stem else ""
    return "." in version and all(part.isdigit() for part in version.split("."))
