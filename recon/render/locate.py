"""The one locator engine: how every sealed check, workflow step and contract step finds
its elements in a live page.

A locator (:class:`recon.model.interaction.Locator`) is one of ``{role[, name]}``,
``{label}``, ``{text}``, ``{test_id}``, ``{title}``, ``{placeholder}``, ``{alt}`` or
(sealed checks only) ``{css}``. Matches are every element of the main frame's document that the
locator names, in document order; nothing is ever "the element at a point".

- ``role`` (and ``name``): chromium's computed accessible role, and its computed name
  compared exactly after whitespace collapsing. The role names are chromium's, the
  ones the DOM snapshot records and region selectors use (``recon.grade.selectors``
  lists them): ``image`` not ``img``, ``generic`` for ``div``, ``LabelText`` for
  ``<label>``. Nodes the accessibility tree ignores (``aria-hidden``, ``visibility:
  hidden``) or leaves out (``display: none``) are not matched, as playwright's
  ``get_by_role`` would not.
- ``label``: elements whose computed accessible name is ``label`` and comes from a label
  (``<label for>``, a wrapping ``<label>``, ``aria-labelledby`` or ``aria-label``), not
  from their content, title or placeholder.
- ``text``: the innermost elements whose whole text (``textContent`` outside ``<head>``,
  scripts, styles and templates, whitespace collapsed) equals ``text`` exactly: for
  ``<p><b>0</b> items left</p>`` the ``p``; a hidden copy matches too.
- ``test_id``: ``data-testid`` equal to the value.
- ``title``, ``placeholder``, ``alt``: elements whose attribute of that name equals the
  value exactly after whitespace collapsing (a label with only a ``title``, an input known
  by its placeholder, an image by its alt text); hidden ones match too, as for ``text``.
- ``css`` (sealed checks only): ``querySelectorAll``.

Roles and names come from ``Accessibility.getFullAXTree`` and everything else runs in
the harness's isolated world (:class:`recon.render.snapshot.IsolatedWorld`), so page
script can neither fake a match nor the values read from one. The matches stay in that
world as an array; :meth:`Found.read` runs a function on chosen matches there.
Actions (click, fill...) need a playwright locator: :meth:`Found.path` gives a match's
structural CSS path (``html > body:nth-of-type(1) > ...``) for that.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from playwright.sync_api import Browser, CDPSession
from playwright.sync_api import Error as PlaywrightError

from recon.model.interaction import Locator
from recon.render.page import Reader, Viewport, guard, load, open_page
from recon.render.session import HARNESS_LIMIT_S
from recon.render.snapshot import Element, IsolatedWorld, snapshot

GROUP = "recon-locate"
LABEL_ATTRIBUTES = frozenset({"aria-label", "aria-labelledby"})
LABEL_ELEMENTS = frozenset({"label", "labelfor", "labelwrapped"})
SHOWN = 5
"""Matches named when a locator is ambiguous."""


def normalise(text: str) -> str:
    """Whitespace collapsed and trimmed, zero-width spaces dropped (as the page side does)."""
    return " ".join(text.replace("\u200b", "").split())


def shown(spec: Locator) -> str:
    """``{role: button, name: Buy}``: a locator as a message names it."""
    return "{" + ", ".join(f"{k}: {v}" for k, v in spec.given().items()) + "}"


@dataclass(frozen=True)
class Found:
    """The elements a locator matched, in document order, held in the isolated world."""

    cdp: CDPSession
    array: str  # the isolated world's object id of the Array of matches
    count: int

    def read(self, function: str, indexes: list[int], *args: Any) -> list[Any]:
        """``function(element, ...args)`` on the matches at ``indexes``, as JSON values."""
        body = f"function (indexes, ...args) {{ const f = {function}; "
        body += "return indexes.map((i) => f(this[i], ...args)); }"
        values = [{"value": indexes}, *({"value": a} for a in args)]
        return list(_call(self.cdp, self.array, body, values))

    def describe(self, limit: int = SHOWN) -> list[str]:
        """How a message names the first ``limit`` matches: ``<p> "Hello" at 8,16 784x18``."""
        return [str(d) for d in self.read(_DESCRIBE_JS, list(range(min(limit, self.count))))]

    def path(self, index: int) -> str | None:
        """A CSS path that names this match alone, or None inside a shadow root."""
        value = self.read(_PATH_JS, [index])[0]
        return None if value is None else str(value)


class Locate:
    """Finds locators' matches in the current document of one page."""

    def __init__(self, cdp: CDPSession, world: IsolatedWorld) -> None:
        self.cdp = cdp
        self.world = world

    def find(self, spec: Locator) -> Found:
        self.world.evaluate("0")  # (re)creates the world after a navigation
        context = self.world.context
        assert context is not None, "evaluate() makes the isolated world"
        if spec.role is not None or spec.label is not None:
            array = self._from_tree(context, _tree_matches(self.cdp, spec))
        else:
            array = _evaluate(self.cdp, context, f"({_QUERY_JS})({json.dumps(_query(spec))})")
        count = int(_call(self.cdp, array, "function () { return this.length; }", []))
        return Found(self.cdp, array, count)

    def release(self) -> None:
        """Let the page collect the matches held so far."""
        self.cdp.send("Runtime.releaseObjectGroup", {"objectGroup": GROUP})

    def _from_tree(self, context: int, backend_ids: list[int]) -> str:
        objects = []
        for backend in backend_ids:
            try:
                node = self.cdp.send(
                    "DOM.resolveNode",
                    {"backendNodeId": backend, "executionContextId": context, "objectGroup": GROUP},
                )
            except PlaywrightError:  # gone since the tree was read: not a match any more
                continue
            objects.append({"objectId": node["object"]["objectId"]})
        reply = self.cdp.send(
            "Runtime.callFunctionOn",
            {
                "functionDeclaration": _ORDER_JS,
                "executionContextId": context,
                "arguments": objects,
                "objectGroup": GROUP,
            },
        )
        return _object_id(reply)


@contextmanager
def live_snapshot(
    browser: Browser, read: Reader, route: str, viewport: Viewport, settle_ms: int = 5000
) -> Iterator[tuple[list[Element], Locate]]:
    """``route`` loaded as a capture loads it: its DOM snapshot, and the engine on the live
    page, to act on an element the snapshot names (:func:`element_path`)."""
    with open_page(browser, read, viewport) as session:
        load(session, route, settle_ms)
        with guard(session, HARNESS_LIMIT_S):
            dom, _ = snapshot(session.cdp, session.world.evaluate)
        yield dom, Locate(session.cdp, session.world)


def element_path(
    locate: Locate, tag: str, box: tuple[int, int, int, int], before: int
) -> str | None:
    """The CSS path of the element a snapshot names by tag and box (the one after
    ``before`` others with the same tag and box), or None when it is not there."""
    found = locate.find(Locator(css=tag))
    boxes = found.read(_BOX_JS, list(range(found.count)))
    hits = [i for i, b in enumerate(boxes) if b is not None and tuple(b) == tuple(box)]
    return found.path(hits[before]) if len(hits) > before else None


def _query(spec: Locator) -> dict[str, str | None]:
    keys = ("css", "test_id", "title", "placeholder", "alt", "text")
    return {key: getattr(spec, key) for key in keys}


def _tree_matches(cdp: CDPSession, spec: Locator) -> list[int]:
    """Backend node ids of the accessibility tree's nodes matching a role or label locator."""
    wanted = normalise((spec.name if spec.role is not None else spec.label) or "")
    found: list[int] = []
    for node in cdp.send("Accessibility.getFullAXTree")["nodes"]:
        backend = node.get("backendDOMNodeId")
        if backend is None or node.get("ignored") or backend in found:
            continue
        name = node.get("name") or {}
        text = normalise(str(name.get("value") or ""))
        if spec.role is not None:
            role = str((node.get("role") or {}).get("value") or "")
            if role == spec.role and (spec.name is None or text == wanted):
                found.append(int(backend))
        elif text == wanted and _named_by_label(name):
            found.append(int(backend))
    return found


def _named_by_label(name: dict[str, Any]) -> bool:
    """Whether the name's effective source (the first with a value, not superseded) is a
    label: ``aria-label``, ``aria-labelledby`` or a ``<label>``."""
    for source in name.get("sources", ()):
        if "value" in source and not source.get("superseded"):
            return (
                source.get("attribute") in LABEL_ATTRIBUTES
                or source.get("nativeSource") in LABEL_ELEMENTS
            )
    return False


def _evaluate(cdp: CDPSession, context: int, expression: str) -> str:
    reply = cdp.send(
        "Runtime.evaluate",
        {"expression": expression, "contextId": context, "objectGroup": GROUP},
    )
    return _object_id(reply)


def _call(cdp: CDPSession, object_id: str, function: str, arguments: list[Any]) -> Any:
    reply = cdp.send(
        "Runtime.callFunctionOn",
        {
            "functionDeclaration": function,
            "objectId": object_id,
            "arguments": arguments,
            "returnByValue": True,
        },
    )
    _raise_exception(reply)
    return reply["result"].get("value")


def _object_id(reply: dict[str, Any]) -> str:
    _raise_exception(reply)
    return str(reply["result"]["objectId"])


def _raise_exception(reply: dict[str, Any]) -> None:
    if "exceptionDetails" in reply:
        details = reply["exceptionDetails"]
        text = details.get("exception", {}).get("description") or details.get("text")
        raise PlaywrightError(str(text).splitlines()[0])


# --- in the isolated world ---------------------------------------------------------------

VISIBLE_JS = """(el) => {
  const shown = (e) => {
    if (getComputedStyle(e).display === 'contents') return Array.from(e.children).some(shown);
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && e.checkVisibility({visibilityProperty: true});
  };
  return shown(el);
}"""
"""Whether an element is visible, as playwright means it: a non-empty box, and neither it
nor an ancestor is ``display: none`` (or ``content-visibility: hidden``), and it is not
``visibility: hidden`` (``display: contents``: any child visible). Opacity does not
matter: a styled checkbox is often ``opacity: 0`` and still the control. Where it lies
does not matter either: off screen or wider than the viewport, it is still visible."""

_ORDER_JS = """function (...found) {
  const out = [...new Set(found)].filter((e) => e instanceof Element);
  const after = Node.DOCUMENT_POSITION_FOLLOWING;
  return out.sort((a, b) => (a === b ? 0 : a.compareDocumentPosition(b) & after ? -1 : 1));
}"""

_QUERY_JS = """(q) => {
  const all = (s) => Array.from(document.querySelectorAll(s));
  if (q.css !== null) return all(q.css);
  if (q.test_id !== null) return all('[data-testid]').filter((e) => e.dataset.testid === q.test_id);
  const norm = (s) => s.replace(/\\u200b/g, '').replace(/\\s+/g, ' ').trim();
  for (const attr of ['title', 'placeholder', 'alt']) {
    if (q[attr] !== null) {
      const want = norm(q[attr]);
      return all(`[${attr}]`).filter((e) => norm(e.getAttribute(attr)) === want);
    }
  }
  const skip = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD']);
  const texts = new Map();
  const text = (el) => {
    let s = '';
    for (const n of el.childNodes) {
      if (n.nodeType === Node.TEXT_NODE) s += n.nodeValue;
      else if (n.nodeType === Node.ELEMENT_NODE && !skip.has(n.nodeName)) s += text(n);
    }
    texts.set(el, s);
    return s;
  };
  text(document.documentElement);
  const want = norm(q.text);
  const hit = (el) => texts.has(el) && norm(texts.get(el)) === want;
  return all('*').filter((el) => hit(el) && !Array.from(el.children).some(hit));
}"""

_DESCRIBE_JS = """(el) => {
  const r = el.getBoundingClientRect();
  const t = (el.textContent || '').replace(/\\s+/g, ' ').trim();
  const box = [r.x + scrollX, r.y + scrollY, r.width, r.height].map(Math.round);
  const said = t ? ` "${t.length > 40 ? t.slice(0, 39) + '…' : t}"` : '';
  return `<${el.localName}>${said} at ${box[0]},${box[1]} ${box[2]}x${box[3]}`;
}"""

_BOX_JS = """(el) => {
  const r = el.getBoundingClientRect();
  if (r.width <= 0 || r.height <= 0) return null;
  return [r.x + scrollX, r.y + scrollY, r.width, r.height].map(Math.round);
}"""
"""An element's box as the DOM snapshot measures it (None where the snapshot skips it)."""

_PATH_JS = """(el) => {
  const parts = [];
  for (let e = el; e; e = e.parentElement) {
    if (e === document.documentElement) return ['html', ...parts].join(' > ');
    let k = 1;
    for (let s = e.previousElementSibling; s; s = s.previousElementSibling) {
      if (s.localName === e.localName) k++;
    }
    parts.unshift(`${CSS.escape(e.localName)}:nth-of-type(${k})`);
  }
  return null;
}"""
