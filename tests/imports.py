"""Every import of every ``recon`` module, read from its source with :mod:`ast`.

Unlike the code graph of the cell kinds (:mod:`recon.pipeline.codegraph`), which leaves out
what never runs, this reads every import: at module level, inside functions and under
``if TYPE_CHECKING:``. An edge is what the import makes Python run: ``from pkg import name``
runs ``pkg`` and, when ``name`` is a submodule, one of the package's lazy ``_EXPORTS`` or a
name its ``__init__`` imports from a module, that module too. A module's own packages are
left out: Python runs them before any of their modules, whatever the module imports.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "recon"


@dataclass(frozen=True)
class Import:
    importer: str
    target: str
    line: int
    named: bool = True  # the source names the target; False: a package's face leads to it

    def __str__(self) -> str:
        return f"{self.importer}:{self.line} -> {self.target}"


@cache
def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Module name -> its file, for every module under ``root`` (the ``recon`` folder)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = ["recon", *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_bytes(), filename=str(path))


def _faces(root: Path, package: str) -> dict[str, str]:
    """Name -> the module it comes from, for the names a package's ``__init__`` offers:
    its lazy ``_EXPORTS`` and the names it imports at module level."""
    path = modules(root).get(package)
    if path is None or path.name != "__init__.py":
        return {}
    found: dict[str, str] = {}
    for node in _tree(path).body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.update({a.asname or a.name: node.module for a in node.names})
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in targets):
            assert isinstance(node, ast.Assign)
            found.update(ast.literal_eval(node.value))
    return found


def _resolve(root: Path, module: str, name: str) -> tuple[str, bool] | None:
    """The module ``from module import name`` runs beyond ``module``, and whether the
    source names it (a submodule) or the package's face leads to it."""
    if f"{module}.{name}" in modules(root):
        return f"{module}.{name}", True
    found = _faces(root, module).get(name)
    return None if found is None else (found, False)


def _absolute(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    anchor = importer.split(".") if is_package else importer.split(".")[:-1]
    anchor = anchor[: len(anchor) - (node.level - 1)]
    return ".".join([*anchor, node.module] if node.module else anchor)


def _targets(root: Path, importer: str) -> list[tuple[str, int, bool]]:
    path = modules(root)[importer]
    found: list[tuple[str, int, bool]] = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno, True) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(importer, path.name == "__init__.py", node)
            found.append((base, node.lineno, True))
            for alias in node.names:
                resolved = _resolve(root, base, alias.name)
                if resolved is not None:
                    found.append((resolved[0], node.lineno, resolved[1]))
    return found


def _own(importer: str, target: str) -> bool:
    """The importer itself, or one of the packages it lies in."""
    return importer == target or importer.startswith(target + ".")


@cache
def imports(root: Path = PACKAGE) -> tuple[Import, ...]:
    """Every edge between two ``recon`` modules, each once per line."""
    known = modules(root)
    found: dict[tuple[str, str, int], Import] = {}
    for importer in known:
        for target, line, named in _targets(root, importer):
            if target in known and not _own(importer, target):
                seen = found.get((importer, target, line))
                if seen is None or (named and not seen.named):
                    found[importer, target, line] = Import(importer, target, line, named)
    return tuple(found.values())


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (its nodes in order, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None
