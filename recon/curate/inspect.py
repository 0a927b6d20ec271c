"""``recon case inspect``: the rendered reference as the grader's selectors see it.

Prints the accessibility tree of the reference (chromium's computed roles and names,
:mod:`recon.render.inspect`) at one route and viewport, and, given a region selector
(the grammar of :mod:`recon.grade.selectors`), every element of the DOM snapshot it
matches and the one a region would score, or why it matches nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from recon.errors import ConfigError
from recon.grade import box_of, selectors
from recon.model.contract import VIEWPORTS
from recon.model.grading import Region
from recon.project.loader import LoadedCase
from recon.render.snapshot import Element


@dataclass(frozen=True)
class Inspection:
    header: str
    tree: list[str]
    matches: list[str]


def inspect(
    case: LoadedCase, viewport: str | None, selector: str | None, route: str | None
) -> Inspection:
    """Render ``case``'s reference and read it (one browser, one page)."""
    from recon.curate.freeze import folder_reader
    from recon.render import open_browser
    from recon.render.inspect import accessibility_tree

    names = [v.name for v in case.contract.viewports]
    name = viewport or names[0]
    if name not in names:
        raise ConfigError(f"--viewport {name}: not one of the contract's viewports {names}")
    route = route or case.contract.routes[0]
    if route not in case.contract.routes:
        raise ConfigError(
            f"--route {route}: not one of the contract's routes {case.contract.routes}"
        )
    vp = VIEWPORTS[name]
    with open_browser() as browser:
        tree, dom = accessibility_tree(browser, folder_reader(case.reference), route, vp)
    header = (
        f"{case.id}: the sealed reference at {route} ({name}, {vp.width}x{vp.height}): "
        "accessibility tree with chromium's computed roles and names"
    )
    found = [] if selector is None else matches(selector, name, dom)
    return Inspection(header, [node.line() for node in tree], found)


def matches(selector: str, viewport: str, dom: list[Element]) -> list[str]:
    """What ``selector`` matches in ``dom``, as a region resolves it."""
    region = Region(id="inspect", selector=selector, viewport=viewport)
    element, count, problem = selectors.find(region, dom)
    query = selectors.parse(selector)
    if element is None or query is None:
        return [f"selector {selector!r}: {problem}"]
    found = selectors.select(query, dom)
    lines = [
        f"selector {selector!r}: {count} element(s) in the DOM snapshot; a region scores "
        f"match {query.nth} (`>> nth=N` picks another)"
    ]
    for i, e in enumerate(found):
        mark = "*" if e is element else " "
        name = f" {e.get('name')!r}" if e.get("name") else ""
        text = f" text {str(e.get('text'))[:60]!r}" if e.get("text") else ""
        lines.append(
            f" {mark}{i}: <{e.get('tag')}> {e.get('role') or '-'}{name} box {list(box_of(e))}{text}"
        )
    return lines
