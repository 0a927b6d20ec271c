"""Cell keys and per-kind code digests.

A cell's key is blake3 of the canonical JSON of its kind, the digest of the code that
implements that kind, the digests of its inputs, and its parameters.

A kind's code digest covers what :mod:`recon.pipeline.codegraph` derives from its kind
module (its ``module`` facet in the kind table, :mod:`recon.model.kinds`): the closure of
``recon`` modules it imports, the package data they name, and the toolchain they run on
(Python, third-party distributions, and declared tools such as chromium). The attempt kind
has no code on purpose: no harness change ever re-keys an attempt; attempts re-run only when
case, entry, protocol or image change (DESIGN §4).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from recon.model.kinds import CELL_FORMAT, CODE_FREE, KIND_MODULES
from recon.pipeline.codegraph import CodeGraph
from recon.store import StatCache, digest_json

PACKAGE = Path(__file__).resolve().parent.parent


def tool_versions(chromium: str | None = None) -> dict[str, str]:
    """The version line of every external tool a module may declare in ``TOOL_FACTS``
    (``chromium``: the executable ``RECON_CHROMIUM`` names, if it names one)."""
    from recon.render.browser import browser_version

    return {"chromium": browser_version(chromium)}


@dataclass(frozen=True)
class KindCode:
    """What one kind's code digest covers, file by file."""

    kind: str
    modules: dict[str, str]  # path relative to the package -> blake3
    data: dict[str, str]
    toolchain: dict[str, str]

    @property
    def digest(self) -> str:
        return digest_json(
            {
                "modules": self.modules,
                "data": self.data,
                "toolchain": self.toolchain,
                "format": CELL_FORMAT[self.kind],
            }
        )


class Codes:
    """Every kind's code, derived once per process from the package at ``package``."""

    def __init__(
        self,
        stat_cache: StatCache,
        package: Path = PACKAGE,
        tools: Callable[[], dict[str, str]] = tool_versions,
        facts: Path | None = None,
    ) -> None:
        self.stat = stat_cache
        self.package = package
        self.facts = facts  # CodeGraph's cache of what each module's source says
        self._tools = tools
        self._kinds: dict[str, KindCode] = {}
        self._derived: dict[str, tuple[dict[str, str], dict[str, str], dict[str, str]]] = {}

    @cached_property
    def graph(self) -> CodeGraph:
        return CodeGraph(self.package, self.facts)

    @cached_property
    def tools(self) -> dict[str, str]:
        return self._tools()

    def code(self, kind: str) -> KindCode:
        if kind not in self._kinds:
            self._kinds[kind] = self._derive(kind)
        return self._kinds[kind]

    def digest(self, kind: str) -> str:
        return self.code(kind).digest

    def toolchain(self) -> dict[str, str]:
        """Every kind's toolchain facts merged: what the manifest records under inputs."""
        merged: dict[str, str] = {}
        for kind in KIND_MODULES:
            merged.update(self.code(kind).toolchain)
        return dict(sorted(merged.items()))

    def _derive(self, kind: str) -> KindCode:
        if kind in CODE_FREE:
            return KindCode(kind, {}, {}, {})
        start = KIND_MODULES[kind]
        if start not in self._derived:  # oracle and capture share their module
            graph = self.graph
            modules = graph.closure(start)
            wanted = {t for m in modules for t in graph.modules[m].tools}
            tools = {t: v for t, v in self.tools.items() if t in wanted} if wanted else {}
            self._derived[start] = (
                self._hashed(graph.modules[m].path for m in modules),
                self._hashed(graph.data_files(modules)),
                graph.toolchain(modules, tools),
            )
        hashed, data, toolchain = self._derived[start]
        return KindCode(kind, modules=hashed, data=data, toolchain=toolchain)

    def _hashed(self, paths: Any) -> dict[str, str]:
        return {
            path.relative_to(self.package).as_posix(): self.stat.digest(path)
            for path in sorted(set(paths))
        }


def cell_key(kind: str, code: str, inputs: dict[str, str], params: dict[str, Any]) -> str:
    return digest_json({"kind": kind, "code": code, "inputs": inputs, "params": params})
