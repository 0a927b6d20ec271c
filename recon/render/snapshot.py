"""The DOM/layout snapshot of a capture, taken in an isolated world.

The snapshot script runs through the DevTools protocol in a world of its own
(``Page.createIsolatedWorld``): same DOM, separate JavaScript globals and prototypes. A
page that overrides ``document.querySelectorAll``, ``Element.prototype.getBoundingClientRect``
or ``window.getComputedStyle`` changes only its own world's copies, never the snapshot.

One entry per element with a box, in document order: ``{tag, role, name, text, box,
color, background, font, painted, image, paints, ink}`` (see ``recon.grade._dom``).

``paints`` lists every image the element paints, in a fixed order, as ``{via, url}``
(``truncated: true`` when the URL was cut): its own image (``img``: ``currentSrc``, the
``srcset``/``<picture>`` choice; ``input`` for ``type=image``; ``poster`` of a
``<video>``; ``object``/``embed``; ``svg-image`` for SVG ``<image href|xlink:href>``;
``canvas``, whose pixels only the screenshot holds, with an empty ``url``), then each
``url()`` of its computed ``background-image`` (every layer, ``image-set`` options
included), ``border-image-source``, ``list-style-image`` (of a list item) and
``content``, for the element and for its ``::before``/``::after`` when they exist
(``background::before``...); then the paints of the painted elements of its open shadow
tree (nested ones too; ten times the element limit read at most), each with that
element's ``tag`` and ``box`` (page px), since those elements have no entry of their own
(a host without a box hands them to the first entry). URLs are absolute as the browser
resolved them; a ``data:`` URL is kept whole (it holds the image's bytes) up to
:data:`URL_LIMIT` characters and while the snapshot's :data:`URL_BUDGET` lasts, and is
cut to :data:`KEPT_URL_CHARS` past them.

``ink`` (``null`` for an element without own text) says how its own text reaches the
screen, so a grader can tell text a person can see: ``fill``, the computed
``-webkit-text-fill-color`` (what paints the glyphs) as ``[r, g, b, alpha]``;
``opacity``, the product of the element's and its ancestors' ``opacity``; ``backdrop``,
the ``[r, g, b]`` of the element's and its ancestors' background colours composited over
white (images and gradients are not part of it: the capture shows those); ``size``, the
font size in px; ``area`` and ``box``, the px² and the bounding box (page px) of its
text's line boxes once clipped by the page's edges and by its own and its ancestors'
``overflow``, ``clip`` and ``clip-path: inset()``.

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
URL_LIMIT = 8_000_000
"""Characters of one painted image's URL kept (a ``data:`` URL holds the image's bytes)."""
URL_BUDGET = 16_000_000
"""Characters of painted-image URLs kept per snapshot; past it, URLs are cut."""
KEPT_URL_CHARS = 64
"""What is left of a URL that is cut (``truncated: true``): never enough to decode."""
WORLD = "recon-snapshot"

Element = dict[str, Any]


def snapshot(
    cdp: CDPSession, evaluate: Callable[[str], Any], limit: int = DOM_LIMIT
) -> tuple[list[Element], str | None]:
    """Visible elements of the main frame, measured by ``evaluate`` (an isolated world's),
    with chromium's accessible roles and names; and why roles and names are missing."""
    for _ in range(TRIES):
        backend_ids = document_elements(cdp)
        script = f"({_DOM_JS})({int(limit)}, {URL_LIMIT}, {URL_BUDGET})"
        found = cast(list[Element], evaluate(script))
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


_PAINTS_JS = r"""
  let budget = urlBudget;
  const kept = (url) => {  // a URL kept whole while the snapshot's budget lasts
    url = String(url);
    if (url.length <= KEPT) return {url};
    if (url.length <= urlLimit && url.length <= budget) { budget -= url.length; return {url}; }
    return {url: url.slice(0, KEPT), truncated: true};
  };
  const URL_RE = /url\(\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^)'"\s]*))\s*\)/g;
  const cssUrls = (value) => Array.from(String(value || '').matchAll(URL_RE), (m) =>
    (m[1] ?? m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1')).filter(Boolean);
  const CSS_PAINTS = [['backgroundImage', 'background'], ['borderImageSource', 'border-image'],
                      ['listStyleImage', 'list-style'], ['content', 'content']];
  const SVG = 'http://www.w3.org/2000/svg', XLINK = 'http://www.w3.org/1999/xlink';
  const svgHref = (el) => {
    const raw = (el.href && el.href.baseVal) || el.getAttribute('href') ||
      el.getAttributeNS(XLINK, 'href') || '';
    try { return raw && new URL(raw, document.baseURI).href; } catch (e) { return raw; }
  };
  const ownPaint = (el, tag) => {
    if (tag === 'img') return ['img', el.currentSrc || el.src];
    if (tag === 'input' && el.type === 'image') return ['input', el.src];
    if (tag === 'video') return ['poster', el.poster];
    if (tag === 'object') return ['object', el.data];
    if (tag === 'embed') return ['embed', el.src];
    if (tag === 'image' && el.namespaceURI === SVG) return ['svg-image', svgHref(el)];
    return null;
  };
  const paints = (el, cs, tag) => {
    const found = tag === 'canvas' ? [{via: 'canvas', url: ''}] : [];
    const own = ownPaint(el, tag);
    if (own && own[1]) found.push({via: own[0], ...kept(own[1])});
    for (const pseudo of ['', '::before', '::after']) {
      const style = pseudo ? getComputedStyle(el, pseudo) : cs;
      if (pseudo && (style.content === 'none' || style.content === 'normal')) continue;
      for (const [prop, via] of CSS_PAINTS) {
        // list-style-image is inherited: only a list item paints its marker
        if (prop === 'listStyleImage' && !style.display.includes('list-item')) continue;
        for (const url of cssUrls(style[prop])) found.push({via: via + pseudo, ...kept(url)});
      }
    }
    return found;
  };
  const pageBox = (r) => [r.x + scrollX, r.y + scrollY, r.width, r.height].map(Math.round);
  let shadowVisits = 10 * limit;  // elements of shadow trees read, at most
  const shadowPaints = (root, found) => {  // paints inside open shadow trees, with their boxes
    for (const el of root.querySelectorAll('*')) {
      if (found.length >= limit || --shadowVisits < 0) break;
      const r = el.getBoundingClientRect();
      const shown = r.width > 0 && r.height > 0 &&
        el.checkVisibility({opacityProperty: true, visibilityProperty: true});
      if (shown) {
        const tag = el.tagName.toLowerCase();
        for (const p of paints(el, getComputedStyle(el), tag)) {
          found.push({...p, tag, box: pageBox(r)});
        }
      }
      if (el.shadowRoot) shadowPaints(el.shadowRoot, found);
    }
    return found;
  };
"""

_INK_JS = r"""
  const probe = new OffscreenCanvas(1, 1).getContext('2d', {willReadFrequently: true});
  const colours = new Map();
  const rgba = (css) => {  // [r, g, b, alpha] of a computed CSS colour
    if (colours.has(css)) return colours.get(css);
    const m = /^rgba?\(([^)]*)\)$/.exec(css);
    const parts = m ? m[1].split(/[\s,/]+/).filter(Boolean).map(Number) : [];
    let v;
    if (parts.length >= 3 && parts.every(Number.isFinite)) {
      v = [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
    } else {  // another colour space: let the canvas convert it
      probe.clearRect(0, 0, 1, 1);
      probe.fillStyle = 'rgba(0, 0, 0, 0)';
      probe.fillStyle = css;
      probe.fillRect(0, 0, 1, 1);
      const d = probe.getImageData(0, 0, 1, 1).data;
      v = [d[0], d[1], d[2], d[3] / 255];
    }
    colours.set(css, v);
    return v;
  };
  const upward = (step, root) => {  // a value folded from the root element down, memoised
    const cache = new Map();
    return (el) => {
      const chain = [];
      let e = el;
      while (e && !cache.has(e)) { chain.push(e); e = e.parentElement; }
      let v = e ? cache.get(e) : root;
      for (let i = chain.length - 1; i >= 0; i--) { v = step(chain[i], v); cache.set(chain[i], v); }
      return v;
    };
  };
  const opacity = upward((el, above) => above * Number(getComputedStyle(el).opacity), 1);
  const backdrop = upward((el, under) => {
    const [r, g, b, a] = rgba(getComputedStyle(el).backgroundColor);
    return [r * a + under[0] * (1 - a), g * a + under[1] * (1 - a), b * a + under[2] * (1 - a)];
  }, [255, 255, 255]);
  const meet = (a, b) => [Math.max(a[0], b[0]), Math.max(a[1], b[1]),
                          Math.min(a[2], b[2]), Math.min(a[3], b[3])];
  const px = (v, whole) => v.endsWith('%') ? parseFloat(v) * whole / 100 : parseFloat(v) || 0;
  const clipRect = (r, value) => {  // clip: rect(top, right, bottom, left) of the border box
    const [t, rt, b, l] = value.slice(5, -1).split(/[\s,]+/);
    const at = (v, dflt) => v === 'auto' || v === undefined ? dflt : parseFloat(v) || 0;
    return [r.left + at(l, 0), r.top + at(t, 0), r.left + at(rt, r.width), r.top + at(b, r.height)];
  };
  const insetRect = (r, value) => {  // clip-path: inset(top right bottom left [round ...])
    const v = value.split(' round ')[0].trim().split(/\s+/);
    const [t, rt, b, l] = [v[0], v[1] ?? v[0], v[2] ?? v[0], v[3] ?? v[1] ?? v[0]];
    return [r.left + px(l, r.width), r.top + px(t, r.height),
            r.right - px(rt, r.width), r.bottom - px(b, r.height)];
  };
  const root = document.documentElement;
  const page = [-scrollX, -scrollY, root.scrollWidth - scrollX, root.scrollHeight - scrollY];
  const clipOf = upward((el, outer) => {  // where el's content can show (viewport px)
    const s = getComputedStyle(el);
    const overflowing = s.overflowX !== 'visible' || s.overflowY !== 'visible';
    const cut = overflowing || s.clip !== 'auto' || s.clipPath.startsWith('inset(');
    if (!cut) return outer;
    const r = el.getBoundingClientRect();
    let c = outer;
    if (s.overflowX !== 'visible') c = meet(c, [r.left, -Infinity, r.right, Infinity]);
    if (s.overflowY !== 'visible') c = meet(c, [-Infinity, r.top, Infinity, r.bottom]);
    const placed = s.position === 'absolute' || s.position === 'fixed';
    if (s.clip.startsWith('rect(') && placed) c = meet(c, clipRect(r, s.clip));
    if (s.clipPath.startsWith('inset(')) c = meet(c, insetRect(r, s.clipPath.slice(6, -1)));
    return c;
  }, page);
  const range = document.createRange();
  const round4 = (v) => Math.round(v * 1e4) / 1e4;
  const ink = (el, cs) => {  // how the element's own text reaches the screen
    const c = clipOf(el);
    let area = 0;
    let box = null;
    for (const n of el.childNodes) {
      if (n.nodeType !== Node.TEXT_NODE || !n.nodeValue.trim()) continue;
      range.selectNodeContents(n);
      for (const q of range.getClientRects()) {
        const x0 = Math.max(q.left, c[0]), y0 = Math.max(q.top, c[1]);
        const x1 = Math.min(q.right, c[2]), y1 = Math.min(q.bottom, c[3]);
        if (x1 <= x0 || y1 <= y0) continue;
        area += (x1 - x0) * (y1 - y0);
        box = box ? [Math.min(box[0], x0), Math.min(box[1], y0), Math.max(box[2], x1),
                     Math.max(box[3], y1)] : [x0, y0, x1, y1];
      }
    }
    const b = box || [0, 0, 0, 0];
    return {
      fill: rgba(cs.webkitTextFillColor).map((v, i) => (i < 3 ? Math.round(v) : round4(v))),
      opacity: round4(opacity(el)),
      backdrop: backdrop(el).map(Math.round),
      size: Math.round((parseFloat(cs.fontSize) || 0) * 100) / 100,
      area: Math.round(area),
      box: box ? [b[0] + scrollX, b[1] + scrollY, b[2] - b[0], b[3] - b[1]].map(Math.round) : b,
    };
  };
"""

_DOM_JS = (
    """(limit, urlLimit, urlBudget) => {
  const KEPT = """
    + str(KEPT_URL_CHARS)
    + ";"
    + _PAINTS_JS
    + _INK_JS
    + r"""
  const ownText = (el) => {
    let s = '';
    for (const n of el.childNodes) if (n.nodeType === Node.TEXT_NODE) s += n.nodeValue;
    return s.replace(/\s+/g, ' ').trim().slice(0, 200);
  };
  const out = [];
  const unhosted = [];  // shadow paints of hosts without a box of their own
  let index = -1;
  for (const el of document.querySelectorAll('*')) {
    index++;
    if (out.length >= limit) break;
    const r = el.getBoundingClientRect();
    const shadow = el.shadowRoot ? shadowPaints(el.shadowRoot, []) : [];
    if (r.width <= 0 || r.height <= 0) {
      unhosted.push(...shadow);
      continue;
    }
    const cs = getComputedStyle(el);
    const tag = el.tagName.toLowerCase();
    const text = ownText(el);
    out.push({
      index,
      tag,
      role: '',
      name: '',
      text,
      box: [r.x + scrollX, r.y + scrollY, r.width, r.height].map(Math.round),
      color: cs.color,
      background: cs.backgroundColor,
      font: {family: cs.fontFamily, size: cs.fontSize, weight: cs.fontWeight},
      painted: el.checkVisibility({opacityProperty: true, visibilityProperty: true}),
      image: [cs, getComputedStyle(el, '::before'), getComputedStyle(el, '::after')]
        .some((s) => /url\(/.test(s.backgroundImage + s.content)),
      paints: [...paints(el, cs, tag), ...shadow],
      ink: text ? ink(el, cs) : null,
    });
  }
  if (out.length) out[0].paints.push(...unhosted);
  return out;
}"""
)
