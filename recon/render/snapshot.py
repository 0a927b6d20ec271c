"""The DOM/layout snapshot of a capture, taken in an isolated world.

The snapshot script runs through the DevTools protocol in a world of its own
(``Page.createIsolatedWorld``): same DOM, separate JavaScript globals and prototypes. A
page that overrides ``document.querySelectorAll``, ``Element.prototype.getBoundingClientRect``
or ``window.getComputedStyle`` changes only its own world's copies, never the snapshot.

One entry per visible element, in document order: ``{tag, role, name, text, box,
color, background, font}`` (see ``recon.grade._dom``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from playwright.sync_api import CDPSession
from playwright.sync_api import Error as PlaywrightError

DOM_LIMIT = 2000
WORLD = "recon-snapshot"


def snapshot(evaluate: Callable[[str], Any], limit: int = DOM_LIMIT) -> list[dict[str, Any]]:
    """Visible elements of the main frame, measured by ``evaluate`` (an isolated world's)."""
    return cast(list[dict[str, Any]], evaluate(f"({_DOM_JS})({int(limit)})"))


class IsolatedWorld:
    """An isolated world of the main frame's document, made on first use and remade after
    a navigation; state a script leaves on its ``globalThis`` lasts as long as the document."""

    def __init__(self, cdp: CDPSession) -> None:
        self.cdp = cdp
        self.context: int | None = None

    def evaluate(self, expression: str) -> Any:
        """The JSON value of ``expression``, evaluated in this world."""
        if self.context is not None:
            try:
                return evaluate_in(self.cdp, self.context, expression)
            except PlaywrightError as exc:
                if "Cannot find context" not in (exc.message or ""):
                    raise
        self.context = isolated_world(self.cdp)
        return evaluate_in(self.cdp, self.context, expression)


def isolated_world(cdp: CDPSession) -> int:
    """A new isolated world of the current document of the main frame (its context id)."""
    frame = cdp.send("Page.getFrameTree")["frameTree"]["frame"]["id"]
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
  for (const el of document.querySelectorAll('*')) {
    if (out.length >= limit) break;
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) continue;
    const cs = getComputedStyle(el);
    out.push({
      tag: el.tagName.toLowerCase(),
      role: el.getAttribute('role') || '',
      name: el.getAttribute('aria-label') || '',
      text: ownText(el),
      box: [r.x + scrollX, r.y + scrollY, r.width, r.height].map(Math.round),
      color: cs.color,
      background: cs.backgroundColor,
      font: {family: cs.fontFamily, size: cs.fontSize, weight: cs.fontWeight},
    });
  }
  return out;
}"""
