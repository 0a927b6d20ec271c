"""Public faces: every package offers its names one way, and no module reaches past another
package's face into its ``_private`` modules (issue 26).

The one way, in every package's ``__init__.py``: a lazy ``_EXPORTS`` table (name -> the
module defining it; :mod:`recon._lazy`, read by the code graph too), ``__all__`` sorted
from it, ``__getattr__ = exports(__name__, _EXPORTS)``, and the same names imported under
``if TYPE_CHECKING:`` for type checkers, which do not run ``__getattr__``. A package with
nothing to offer has a docstring only. Fast: the sources are parsed, nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.imports import imports, modules

PACKAGES = sorted(
    name for name, path in modules().items() if path.name == "__init__.py" and name != "recon"
)
"""Every sub-package (the root package holds ``__version__`` only)."""
FACE_LINES = {
    "from __future__ import annotations",
    "from typing import TYPE_CHECKING",
    "from recon._lazy import exports",
    "__all__ = sorted(_EXPORTS)",
    "__getattr__ = exports(__name__, _EXPORTS)",
}


def face(package: str) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """A package's ``_EXPORTS``, its ``TYPE_CHECKING`` names (name -> module) and every
    other statement of its ``__init__``, as source."""
    tree = ast.parse(modules()[package].read_bytes())
    exported: dict[str, str] = {}
    typed: dict[str, str] = {}
    other: list[str] = []
    for node in tree.body[1:] if ast.get_docstring(tree) is not None else tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "_EXPORTS":
            exported = ast.literal_eval(node.value)
        elif isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for child in node.body:
                if not isinstance(child, ast.ImportFrom) or child.module is None:
                    other.append(ast.unparse(child))
                    continue
                for alias in child.names:
                    if alias.asname != alias.name:
                        other.append(ast.unparse(child))  # `X as X`: re-exported, says mypy
                    typed[alias.name] = child.module
        elif ast.unparse(node) not in FACE_LINES:
            other.append(ast.unparse(node))
    return exported, typed, other


def owner(module: str) -> str | None:
    """The sub-package of ``recon`` whose private module this is (``recon`` for the root's
    own, such as ``recon._lazy``), or None for a public module."""
    parts = module.split(".")
    private = [i for i, p in enumerate(parts) if p.startswith("_") and not p.startswith("__")]
    return ".".join(parts[: min(private[0], 2)]) if private else None


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_offers_its_names_one_way(package: str) -> None:
    exported, typed, other = face(package)
    assert other == [], "only the lazy face: _EXPORTS, __all__, __getattr__, TYPE_CHECKING"
    assert typed == exported, "the TYPE_CHECKING imports must name exactly what _EXPORTS does"
    tree = ast.parse(modules()[package].read_bytes())
    if exported:  # a face, whole
        assert {ast.unparse(n) for n in tree.body} >= FACE_LINES
    else:  # nothing to offer: its docstring only
        assert len(tree.body) == (ast.get_docstring(tree) is not None)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_is_public_defined_and_no_submodule(package: str) -> None:
    """A name that is also a submodule would be the module once anything imported it
    (Python binds a package's submodules on the package, before ``__getattr__``)."""
    exported, _, _ = face(package)
    wrong = []
    for name, module in sorted(exported.items()):
        if name.startswith("_") or f"{package}.{name}" in modules():
            wrong.append(f"{name}: private, or the name of a submodule")
        elif module not in modules() or name not in _defined(modules()[module]):
            wrong.append(f"{name}: not defined in {module}")
    assert wrong == []


def test_no_module_imports_another_package_s_private_module() -> None:
    """``recon.grade._ssim`` is the grader's own; the site asks ``recon.grade`` for it."""
    wrong = []
    for edge in imports():
        home = owner(edge.target)
        if edge.named and home is not None and not (edge.importer + ".").startswith(home + "."):
            wrong.append(str(edge))
    assert wrong == []


def _defined(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.parse(path.read_bytes()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).split(".")[0] for a in node.names)
    return found
