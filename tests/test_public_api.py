import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import sourcewise

PUBLIC_NAMES = 95  # the names under the package's `if TYPE_CHECKING:` (with __version__: __all__)


def _typed_exports() -> dict[str, tuple[str, str | None]]:
    """What a type checker sees the package export: the ``if TYPE_CHECKING:`` imports of its
    ``__init__.py`` (name -> module, and the alias it is imported under)."""
    tree = ast.parse(Path(sourcewise.__file__).read_text("utf-8"))
    blocks = [n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"]
    assert len(blocks) == 1, "the public list is one `if TYPE_CHECKING:` block"
    found: dict[str, tuple[str, str | None]] = {}
    for statement in blocks[0].body:
        assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
        assert statement.module, ast.unparse(statement)
        for alias in statement.names:
            found[alias.name] = (statement.module, alias.asname)
    return found


def test_the_public_list_is_what_the_package_exports() -> None:
    typed = _typed_exports()
    # The count is pinned: adding or removing a public name is a decision this line makes you state.
    assert len(typed) == PUBLIC_NAMES, f"{len(typed)} public names: change PUBLIC_NAMES if that is meant"
    # Type checkers and the running package agree (strict mypy re-exports only ``X as X``).
    assert sorted(sourcewise.__all__) == sorted([*typed, "__version__"])
    for name, (module, alias) in typed.items():
        assert alias == name, f"{name}: import it as `{name} as {name}` (an explicit re-export)"
        defined = importlib.import_module(module)
        assert getattr(sourcewise, name) is getattr(defined, name), name
        assert name in getattr(defined, "__all__", [name]), f"{module} does not export {name}"
    everything: dict[str, object] = {}
    exec("from sourcewise import *", everything)
    assert set(everything) - {"__builtins__"} == set(sourcewise.__all__)
    assert set(sourcewise.__all__) <= set(dir(sourcewise))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = sourcewise.nothing_here  # type: ignore[attr-defined]


def test_no_public_name_is_also_a_module_of_the_package() -> None:
    """Importing ``sourcewise.X`` sets the package's attribute ``X`` to the module: a module named
    like a public function (``ask.py`` beside ``sourcewise.ask``) would replace the function."""
    modules = {info.name for info in pkgutil.iter_modules(sourcewise.__path__)}
    assert "loops" in modules
    assert modules.isdisjoint(sourcewise.__all__), modules & set(sourcewise.__all__)


def test_errors_form_one_tree() -> None:
    for name in sourcewise.__all__:
        obj = getattr(sourcewise, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, sourcewise.SourcewiseError), name


def test_sync_search_refuses_inside_an_event_loop() -> None:
    import asyncio

    async def inner() -> None:
        with pytest.raises(RuntimeError, match="await"):
            sourcewise.search("react hooks")

    asyncio.run(inner())
