"""What code computes each cell kind: derived from the import graph, never listed by hand.

A kind's code (DESIGN §4) is:

- the **closure** of ``recon`` modules its kind module imports, found by reading every
  module's ``import`` statements with :mod:`ast` (function-level imports too: they run
  when the cell does; ``if TYPE_CHECKING:`` blocks are skipped: they never run). Importing
  ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py``, so parents are in the closure.
  A package whose ``__init__`` exports names lazily declares them in a module-level
  ``_EXPORTS = {"Name": "module.path"}`` dict; ``from package import Name`` then
  depends on that module only. A name that resolves to nothing is an error: the
  closure must never be guessed;
- the **package data** those modules load: a non-module file (a font, a YAML lock, a
  script copied into a container) belongs to a module that names it, or a folder it lies
  in, in a string literal, within that module's own package folder;
- the **toolchain** they run on: the Python version, the version of every third-party
  distribution the closure imports, and the external tools a module declares in a
  module-level ``TOOL_FACTS = ("chromium",)``.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import json
import platform
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import blake3

from recon.errors import HarnessError
from recon.store.atomic import write_atomic
from recon.store.disk import DiskFull

ROOT_PACKAGE = "recon"
SKIP_DIRS = {"__pycache__"}
SKIP_SUFFIXES = (".pyc", ".pyo")


@dataclass(frozen=True)
class Module:
    """One ``recon`` module as read from its source."""

    name: str
    path: Path
    imports: tuple[tuple[str, tuple[str, ...]], ...]  # (module, names imported from it)
    external: frozenset[str]  # top-level names of third-party packages it imports
    strings: frozenset[str]  # its string literals (where package data is named)
    exports: dict[str, str]  # its lazy ``_EXPORTS`` table, if any
    defined: frozenset[str]  # names bound at module level
    tools: tuple[str, ...]  # its TOOL_FACTS

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


class CodeGraph:
    """The modules and data files of the ``recon`` package at ``root`` (the package folder).

    ``facts`` (a JSON file in the store's state) keeps what was read from each module,
    keyed by its name and the blake3 of its source, so that a process reads again only the
    modules that changed: parsing all of them was most of the time a small build spent
    deriving its code digests. The file is a cache and nothing else: a missing, damaged or
    foreign one (another Python, another version of this reader) is read as empty.
    """

    def __init__(self, root: Path, facts: Path | None = None) -> None:
        self.root = Path(root)
        self.modules: dict[str, Module] = {}
        self.data: list[Path] = []
        known = _load_facts(facts)
        seen: dict[str, dict[str, Any]] = {}
        for path in sorted(_files(self.root)):
            if path.suffix == ".py":
                name = _module_name(self.root, path)
                source = path.read_bytes()
                key = f"{name} {blake3.blake3(source).hexdigest()}"
                module = _from_row(name, path, known.get(key))
                if module is None:
                    module = _read_module(name, path, source)
                self.modules[name] = module
                seen[key] = _to_row(module)
            self.data.append(path)  # a module may be data too: a script copied elsewhere
        if facts is not None and seen.keys() != known.keys():
            _save_facts(facts, seen)

    def closure(self, start: str) -> list[str]:
        """Every module that importing and running ``start`` may execute, sorted."""
        seen: set[str] = set()
        todo = [start]
        while todo:
            name = todo.pop()
            for found in [*_parents(name), name]:
                if found in seen:
                    continue
                if found not in self.modules:
                    raise HarnessError(f"code graph: {found!r} is not a module of {self.root}")
                seen.add(found)
                todo.extend(self._edges(self.modules[found]))
        return sorted(seen)

    def _edges(self, module: Module) -> Iterator[str]:
        for target, names in module.imports:
            if not _internal(target):
                continue
            yield target
            for name in names:
                yield from self._resolve(module, target, name)

    def _resolve(self, importer: Module, package: str, name: str) -> Iterator[str]:
        """The module ``from package import name`` runs, beyond ``package`` itself."""
        if f"{package}.{name}" in self.modules:
            yield f"{package}.{name}"
            return
        owner = self.modules.get(package)
        if owner is None or name == "*" or name in owner.defined:
            return
        if name in owner.exports:
            yield owner.exports[name]
            return
        raise HarnessError(
            f"code graph: {importer.path}: `from {package} import {name}` resolves to nothing "
            f"that can be read statically; import it from the module that defines it"
        )

    def data_files(self, modules: Iterable[str]) -> list[Path]:
        """The package data the given modules name (see the module docstring)."""
        found: set[Path] = set()
        for name in modules:
            found.update(self._named_data(name))
        return sorted(found)

    @functools.cache  # noqa: B019 (one graph per process; modules never change under it)
    def _named_data(self, name: str) -> list[Path]:
        module = self.modules[name]
        home = module.path.parent.as_posix() + "/"
        segments = _segments(module.strings)
        return [
            path
            for path, text in self._data_text
            if text.startswith(home) and not segments.isdisjoint(text[len(home) :].split("/"))
        ]

    @cached_property
    def _data_text(self) -> list[tuple[Path, str]]:
        # Paths as text: pathlib's relative_to over every module and every file was most
        # of the time a build spent deriving its code digests.
        return [(path, path.as_posix()) for path in self.data]

    def toolchain(self, modules: Iterable[str], tools: dict[str, str]) -> dict[str, str]:
        """Python, third-party distributions and declared tools of the given modules.

        ``tools`` maps a declared tool (``chromium``) to its version line; a declared tool
        missing from it is an error, never silently left out of a key.
        """
        facts = {"python": f"{platform.python_implementation()} {platform.python_version()}"}
        for name in modules:
            module = self.modules[name]
            for top in module.external:
                for dist in _distributions().get(top, [top]):
                    facts[dist.lower()] = _version(dist)
            for tool in module.tools:
                if tool not in tools:
                    raise HarnessError(f"code graph: {module.path}: no version for tool {tool!r}")
                facts[tool] = tools[tool]
        return dict(sorted(facts.items()))

    @cached_property
    def declared_tools(self) -> set[str]:
        return {tool for module in self.modules.values() for tool in module.tools}


def _files(root: Path) -> Iterator[Path]:
    for path in root.rglob("*"):
        skipped = SKIP_DIRS.intersection(path.relative_to(root).parts)
        if path.is_file() and not path.name.endswith(SKIP_SUFFIXES) and not skipped:
            yield path


def _module_name(root: Path, path: Path) -> str:
    parts = [ROOT_PACKAGE, *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _internal(name: str) -> bool:
    return name == ROOT_PACKAGE or name.startswith(ROOT_PACKAGE + ".")


def _segments(strings: frozenset[str]) -> set[str]:
    """Every path segment of every string literal: a file is named when a segment of its
    path below the module's folder (its name, or a folder between) is one of them."""
    return {part for text in strings for part in text.replace("\\", "/").split("/")}


def _read_module(name: str, path: Path, source: bytes) -> Module:
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as err:
        raise HarnessError(f"code graph: {path}: {err.msg} (line {err.lineno})") from None
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    visitor = _Visitor(package)
    visitor.visit(tree)
    return Module(
        name=name,
        path=path,
        imports=tuple(visitor.imports),
        external=frozenset(visitor.external),
        strings=frozenset(visitor.strings),
        exports=_exports(tree),
        defined=frozenset(_defined(tree)),
        tools=_tools(tree),
    )


class _Visitor(ast.NodeVisitor):
    def __init__(self, package: str) -> None:
        self.package = package
        self.imports: list[tuple[str, tuple[str, ...]]] = []
        self.external: set[str] = set()
        self.strings: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, ())

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            anchor = self.package.split(".")
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join([*anchor, base] if base else anchor)
        self._add(base, tuple(alias.name for alias in node.names))

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and len(node.value) < 200:
            self.strings.add(node.value)

    def _add(self, module: str, names: tuple[str, ...]) -> None:
        if _internal(module):
            self.imports.append((module, names))
            return
        top = module.split(".")[0]
        if top and top not in sys.stdlib_module_names:
            self.external.add(top)


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _top_level_assign(tree: ast.Module, name: str) -> ast.expr | None:
    for node in tree.body:
        value: ast.expr | None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return value
    return None


def _exports(tree: ast.Module) -> dict[str, str]:
    value = _top_level_assign(tree, "_EXPORTS")
    if value is None:
        return {}
    table = ast.literal_eval(value)
    return {str(k): str(v) for k, v in table.items()}


def _tools(tree: ast.Module) -> tuple[str, ...]:
    value = _top_level_assign(tree, "TOOL_FACTS")
    return () if value is None else tuple(str(t) for t in ast.literal_eval(value))


def _defined(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


@functools.cache
def _distributions() -> dict[str, list[str]]:
    return dict(importlib.metadata.packages_distributions())


@functools.cache
def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _reader() -> str:
    """What a cached fact depends on beyond the module's source: this reader and Python."""
    version = ".".join(map(str, sys.version_info[:2]))
    return f"{version} {blake3.blake3(Path(__file__).read_bytes()).hexdigest()}"


def _load_facts(path: Path | None) -> dict[str, dict[str, Any]]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_bytes())
        if data["reader"] != _reader():
            return {}
        return {str(k): v for k, v in data["modules"].items() if isinstance(v, dict)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}  # absent or damaged: read every module again


def _save_facts(path: Path, rows: dict[str, dict[str, Any]]) -> None:
    data = {"reader": _reader(), "modules": dict(sorted(rows.items()))}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(data, sort_keys=True).encode())
    except (OSError, DiskFull):
        pass  # a cache that cannot be written (a full disk, say) is read again next time


def _to_row(module: Module) -> dict[str, Any]:
    return {
        "imports": [[target, list(names)] for target, names in module.imports],
        "external": sorted(module.external),
        "strings": sorted(module.strings),
        "exports": module.exports,
        "defined": sorted(module.defined),
        "tools": list(module.tools),
    }


def _from_row(name: str, path: Path, row: dict[str, Any] | None) -> Module | None:
    """The module a cached row describes; None when there is none or it is damaged."""
    if row is None:
        return None
    try:
        return Module(
            name=name,
            path=path,
            imports=tuple((str(t), tuple(map(str, names))) for t, names in row["imports"]),
            external=frozenset(map(str, row["external"])),
            strings=frozenset(map(str, row["strings"])),
            exports={str(k): str(v) for k, v in row["exports"].items()},
            defined=frozenset(map(str, row["defined"])),
            tools=tuple(map(str, row["tools"])),
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
