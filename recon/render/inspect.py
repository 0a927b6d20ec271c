"""What chromium sees of a page: its accessibility tree with computed roles and names.

For ``recon case inspect``: the route is loaded as a capture loads it, then read through
the DevTools protocol (``Accessibility.getFullAXTree``, joined to ``DOM.getDocument`` for
each node's tag), next to the DOM snapshot the grader's selectors run on. Ignored nodes
are left out (their children move up a level), and so are text leaves: a node's name
already carries its text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from playwright.sync_api import Browser

from recon.render.page import Reader, Viewport, guard, load, open_page
from recon.render.snapshot import Element, document_elements, snapshot

SETTLE_MS = 5000
NAME_SHOWN = 80
TEXT_ROLES = frozenset({"StaticText", "InlineTextBox", "LineBreak"})


@dataclass(frozen=True)
class AxNode:
    """One accessibility node: its depth in the shown tree, role, name and element tag."""

    depth: int
    role: str
    name: str
    tag: str

    def line(self) -> str:
        name = self.name if len(self.name) <= NAME_SHOWN else self.name[: NAME_SHOWN - 1] + "…"
        shown = f" {name!r}" if name else ""
        tag = f"<{self.tag}> " if self.tag else ""
        return f"{'  ' * self.depth}{tag}{self.role}{shown}"


def accessibility_tree(
    browser: Browser, read: Reader, route: str, viewport: Viewport
) -> tuple[list[AxNode], list[Element]]:
    """The shown accessibility tree of ``route`` at ``viewport``, and its DOM snapshot."""
    with open_page(browser, read, viewport) as session:
        load(session, route, SETTLE_MS)
        with guard(session):
            dom, _ = snapshot(session.cdp, session.world.evaluate)
            tags = dict(document_elements(session.cdp))
            nodes = session.cdp.send("Accessibility.getFullAXTree")["nodes"]
    return outline(nodes, tags), dom


def outline(nodes: Sequence[Mapping[str, Any]], tags: Mapping[int, str]) -> list[AxNode]:
    """The tree of ``Accessibility.getFullAXTree`` nodes in document order, depth-first
    from its root, without ignored nodes and text leaves."""
    by_id = {str(n["nodeId"]): n for n in nodes}
    children = {str(n["nodeId"]): [str(c) for c in n.get("childIds", ())] for n in nodes}
    roots = [str(n["nodeId"]) for n in nodes if not n.get("parentId")]
    out: list[AxNode] = []
    stack = [(node_id, 0) for node_id in reversed(roots)]
    while stack:
        node_id, depth = stack.pop()
        node = by_id.get(node_id)
        if node is None:
            continue
        role = str(node.get("role", {}).get("value") or "")
        shown = not node.get("ignored") and role not in TEXT_ROLES
        if shown:
            name = " ".join(str(node.get("name", {}).get("value") or "").split())
            tag = tags.get(int(node.get("backendDOMNodeId") or -1), "")
            out.append(AxNode(depth, role, name, tag))
        below = depth + 1 if shown else depth
        stack.extend((c, below) for c in reversed(children.get(node_id, [])))
    return out
