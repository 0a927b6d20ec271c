"""The DOM/layout snapshot of a capture, taken in an isolated world.

The snapshot script runs through the DevTools protocol in a world of its own
(``Page.createIsolatedWorld``): same DOM, separate JavaScript globals and prototypes. A
page that overrides ``document.querySelectorAll``, ``Element.prototype.getBoundingClientRect``
or ``window.getComputedStyle`` changes only its own world's copies, never the snapshot.

One entry per element with a box, in document order: ``{tag, role, name, text, box,
color, background, font, painted, image}`` (see ``recon.grade._dom``).

``role`` and ``name`` are chromium's computed accessible role and name (the accessibility
tree of ``Accessibility.getFullAXTree``: ``heading``, ``button``, ``textbox`` named by
its ``<label for>``, ``image`` named by its ``alt``...), or ``""`` for an element the
tree leaves out or ignores (``<html>``, ``<body>``, ``<b>``). Both come through the
DevTools protocol, so page script can't fake them either. They are joined to the
snapshot's elements by position: the snapshot script reports each element's index in
document order, and ``DOM.getDocument`` lists the same elements in the same order with
their backend node ids, which key the accessibility tree. A page that changes its DOM
between the two readings (tags no longer line up) is read again, up to
:data:`TRIES` times, and otherwise keeps empty roles and names, recorded as a failure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from playwright.sync_api import CDPSession
from playwright.sync_api import Error as PlaywrightError

DOM_LIMIT = 2000
NAME_LIMIT = 200  # characters of an accessible name kept, like an element's own text
TRIES = 3
WORLD = "recon-snapshot"

Element = dict[str, Any]


def snapshot(
    cdp: CDPSession, evaluate: Callable[[str], Any], limit: int = DOM_LIMIT
) -> tuple[list[Element], str | None]:
    """Visible elements of the main frame, measured by ``evaluate`` (an isolated world's),
    with chromium's accessible roles and names; and why roles and names are missing."""
    for _ in range(TRIES):
        backend_ids = document_elements(cdp)
        found = cast(list[Element], evaluate(f"({_DOM_JS})({int(limit)})"))
        indexes = [int(e.pop("index")) for e in found]
        if _line_up(found, indexes, backend_ids):
            names = accessible_names(cdp)
            for element, index in zip(found, indexes, strict=True):
                element["role"], element["name"] = names.get(backend_ids[index][0], ("", ""))
            return found, None
    return found, "DOM snapshot: the page kept changing its DOM; roles and names left empty"


def _line_up(found: list[Element], indexes: list[int], ids: list[tuple[int, str]]) -> bool:
    """Whether every snapshot element is the element ``DOM.getDocument`` has at its index."""
    return all(i < len(ids) and ids[i][1] == e["tag"] for e, i in zip(found, indexes, strict=True))


def document_elements(cdp: CDPSession) -> list[tuple[int, str]]:
    """(backend node id, lower-case tag) of the document's elements in document order:
    the order of ``document.querySelectorAll('*')`` (no shadow trees, template contents,
    pseudo-elements or frame documents: those are not ``children`` in ``DOM.getDocument``)."""
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]
    out: list[tuple[int, str]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.get("nodeType") == 1:
            out.append((int(node["backendNodeId"]), str(node["nodeName"]).lower()))
        stack.extend(reversed(node.get("children", ())))
    return out


def accessible_names(cdp: CDPSession) -> dict[int, tuple[str, str]]:
    """Backend node id -> (computed role, computed name) of every node the accessibility
    tree includes and does not ignore."""
    out: dict[int, tuple[str, str]] = {}
    for node in cdp.send("Accessibility.getFullAXTree")["nodes"]:
        backend = node.get("backendDOMNodeId")
        if backend is None or node.get("ignored") or backend in out:
            continue
        role = str(node.get("role", {}).get("value") or "")
        name = " ".join(str(node.get("name", {}).get("value") or "").split())
        out[int(backend)] = (role, name[:NAME_LIMIT])
    return out


class IsolatedWorld:
    """An isolated world of the main frame's document, made on first use and remade after
    a navigation; state a script leaves on its ``globalThis`` lasts as long as the document."""

    def __init__(self, cdp: CDPSession) -> None:
        self.cdp = cdp
        self.context: int | None = None
        self.frame: str | None = None  # the main frame's id: the page keeps it across navigations

    def evaluate(self, expression: str) -> Any:
        """The JSON value of ``expression``, evaluated in this world."""
        if self.context is not None:
            try:
                return evaluate_in(self.cdp, self.context, expression)
            except PlaywrightError as exc:
                if "Cannot find context" not in (exc.message or ""):
                    raise
        self.context = self._create()
        return evaluate_in(self.cdp, self.context, expression)

    def _create(self) -> int:
        if self.frame is not None:
            try:
                return isolated_world(self.cdp, self.frame)
            except PlaywrightError:
                pass  # the main frame was replaced: ask for its id again
        self.frame = main_frame(self.cdp)
        return isolated_world(self.cdp, self.frame)


def main_frame(cdp: CDPSession) -> str:
    """The id of the page's main frame."""
    return str(cdp.send("Page.getFrameTree")["frameTree"]["frame"]["id"])


def isolated_world(cdp: CDPSession, frame: str) -> int:
    """A new isolated world of the current document of ``frame`` (its context id)."""
    world = cdp.send("Page.createIsolatedWorld", {"frameId": frame, "worldName": WORLD})
    return int(world["executionContextId"])


def evaluate_in(cdp: CDPSession, context: int, expression: str) -> Any:
    """Evaluate ``expression`` in the isolated world ``context``; its JSON value."""
    reply = cdp.send(
        "Runtime.evaluate",
        {
            "expression": expression,
            "contextId": context,
            "returnByValue": True,
            "awaitPromise": True,
        },
    )
    if "exceptionDetails" in reply:
        details = reply["exceptionDetails"]
        text = details.get("exception", {}).get("description") or details.get("text")
        raise PlaywrightError(f"isolated evaluation failed: {text}")
    return reply["result"].get("value")


_DOM_JS = """(limit) => {
  const ownText = (el) => {
    let s = '';
    for (const n of el.childNodes) if (n.nodeType === Node.TEXT_NODE) s += n.nodeValue;
    return s.replace(/\\s+/g, ' ').trim().slice(0, 200);
  };
  const out = [];
  let index = -1;
  for (const el of document.querySelectorAll('*')) {
    index++;
    if (out.length >= limit) break;
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) continue;
    const cs = getComputedStyle(el);
    out.push({
      index,
      tag: el.tagName.toLowerCase(),
      role: '',
      name: '',
      text: ownText(el),
      box: [r.x + scrollX, r.y + scrollY, r.width, r.height].map(Math.round),
      color: cs.color,
      background: cs.backgroundColor,
      font: {family: cs.fontFamily, size: cs.fontSize, weight: cs.fontWeight},
      painted: el.checkVisibility({opacityProperty: true, visibilityProperty: true}),
      image: [cs, getComputedStyle(el, '::before'), getComputedStyle(el, '::after')]
        .some((s) => /url\\(/.test(s.backgroundImage + s.content)),
    });
  }
  return out;
}"""
