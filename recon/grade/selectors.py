"""Region selectors: the one engine that resolves them, answered from a DOM snapshot.

The grader (:func:`resolve_regions`), ``recon validate`` and the curator tools (the
validity ladder, ``recon.curate.ladder``) all resolve a region's selector here, against
a snapshot of the rendered reference (``recon.render.snapshot``), so they agree on the
element by construction. A tool that must act on that element in a live page finds it
again by its tag and box (:func:`element_of`).

Grammar (one element; ``>> nth=N`` picks the N-th match in document order, default 0)::

    selector := [tag | "*"] ["[role=" v "]"] ["[aria-label=" v "]"] [":has-text(" "t" ")"]
                [" >> nth=" N]

``v`` may be bare, single- or double-quoted. ``[aria-label=v]`` matches the element's
computed accessible name (an ``aria-label``, a ``<label>``, an ``alt``, its text...).
``:has-text("t")`` matches, like playwright's, case-insensitively on normalised text:
an element whose own text contains ``t``, or whose box contains such an element's box
(box nesting: what the snapshot can see). At least one of tag, attribute or text is
required. Anything else (``.class``, ``#id``, combinators) is reported as a problem: the
snapshot cannot answer it, so give a box instead.

Roles are chromium's computed roles (``Accessibility.getFullAXTree``), the same names
the sealed locators' ``role`` uses (``recon.render.locate``); they are not always ARIA's
spelling. An element the accessibility tree ignores has role ``""``. For the usual tags:

==================================  ==========================================
tag                                 chromium's role
==================================  ==========================================
``a`` with ``href``                 ``link`` (without ``href``: ``""``)
``article`` / ``aside`` / ``nav``   ``article`` / ``complementary`` / ``navigation``
``button``                          ``button``
``div``, ``pre``, ``summary``       ``generic``
``section``                         ``region`` when named, else ``generic``
``header`` / ``footer``             ``banner`` / ``contentinfo`` at top level;
                                    ``sectionheader`` / ``sectionfooter`` inside a
                                    ``section``
``form``                            ``form``
``h1``–``h6``                       ``heading``
``img``                             ``image`` (not ARIA's ``img``)
``input`` / ``textarea``            ``textbox``; ``checkbox``, ``radio``... by type
``select``                          ``combobox``
``label``                           ``LabelText``
``ul``, ``ol``, ``menu`` / ``li``   ``list`` / ``listitem``
``main`` / ``p`` / ``hr``           ``main`` / ``paragraph`` / ``separator``
``table``                           ``table``; ``LayoutTable`` without headers
``canvas`` / ``video`` / ``iframe`` ``Canvas`` / ``Video`` / ``Iframe``
``figure`` / ``dialog``             ``figure`` / ``dialog``
``span``, ``b``, ``small``, ``svg`` ``""`` (ignored) unless given a role
==================================  ==========================================

An explicit ``role="..."`` attribute gives that role. When in doubt, read the ``role``
of the element in a capture's ``dom.json``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from recon.grade import _dom
from recon.grade._dom import Box, Dom, Element
from recon.model.grading import Region

_VALUE = r"""(?:"[^"]*"|'[^']*'|[^\]"'\s]+)"""
_SELECTOR = re.compile(
    rf"""^(?P<tag>[a-z][a-z0-9-]*|\*)?
    (?:\[role=(?P<role>{_VALUE})\])?
    (?:\[aria-label=(?P<label>{_VALUE})\])?
    (?::has-text\((?P<text>"[^"]*"|'[^']*')\))?
    (?:\s*>>\s*nth=(?P<nth>\d+))?$""",
    re.VERBOSE,
)
SUPPORTED = 'tag, [role=...], [aria-label=...], :has-text("..."), >> nth=N'


@dataclass(frozen=True)
class Resolution:
    """Each region's box by id, how many elements its selector matched, and any problems."""

    boxes: dict[str, Box] = field(default_factory=dict)
    matches: dict[str, int] = field(default_factory=dict)
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Query:
    tag: str | None
    role: str | None
    label: str | None
    text: str | None
    nth: int


def resolve_regions(
    regions: Sequence[Region], reference_dom: Dom | Mapping[str, Dom]
) -> Resolution:
    """Turn every region into a box in reference pixels, or report why it cannot be.

    ``reference_dom`` is one snapshot for every region, or a mapping viewport -> snapshot.
    A problem reads ``regions[i] (id): ...; fix``; the case validator prefixes the file.
    """
    boxes: dict[str, Box] = {}
    matches: dict[str, int] = {}
    problems: list[str] = []
    for i, region in enumerate(regions):
        where = f"regions[{i}] ({region.id})"
        dom = _dom_for(reference_dom, region.viewport)
        if dom is None:
            problems.append(
                f"{where}: viewport: no reference capture for {region.viewport!r}; "
                "use a viewport of the contract"
            )
            continue
        found, problem = _resolve(region, dom)
        if problem:
            problems.append(f"{where}: {problem}")
        elif found is not None:
            boxes[region.id], matches[region.id] = found
    return Resolution(boxes=boxes, matches=matches, problems=tuple(problems))


def _dom_for(reference_dom: Dom | Mapping[str, Dom], viewport: str) -> Dom | None:
    if isinstance(reference_dom, Mapping):
        return reference_dom.get(viewport)
    return reference_dom


def _resolve(region: Region, dom: Dom) -> tuple[tuple[Box, int] | None, str | None]:
    if region.box is not None:
        box: Box = region.box
        right, bottom = _dom.page_extent(dom)
        if dom and (
            box[0] >= right or box[1] >= bottom or box[0] + box[2] <= 0 or box[1] + box[3] <= 0
        ):
            return None, (
                f"box: {list(box)} lies outside the reference page "
                f"({right}x{bottom} px); fix the box"
            )
        return (box, 1), None
    element, count, problem = find(region, dom)
    if element is None:
        return None, problem
    return (_dom.box_of(element), count), None


def find(region: Region, dom: Dom) -> tuple[Element | None, int, str | None]:
    """The element a selector region names in ``dom``, how many matched, or the problem."""
    selector = region.selector or ""
    query = parse(selector)
    if query is None:
        return (
            None,
            0,
            (
                f"selector: {selector!r} uses syntax a DOM snapshot cannot answer "
                f"(supported: {SUPPORTED}); rewrite it or give a box"
            ),
        )
    found = select(query, dom)
    if not found:
        return (
            None,
            0,
            (
                f"selector: {selector!r} matches nothing in the reference "
                f"({region.viewport}){_roles_present(query, dom)}; fix the selector or give a box"
            ),
        )
    if len(found) <= query.nth:
        return (
            None,
            len(found),
            (
                f"selector: {selector!r} matches {len(found)} element(s) in the reference "
                f"({region.viewport}), so nth={query.nth} does not exist; fix the "
                "selector or give a box"
            ),
        )
    return found[query.nth], len(found), None


def _roles_present(query: _Query, dom: Dom) -> str:
    """When a role matched nothing: the roles chromium computed for the elements of the
    query's tag (or of the whole page), so the curator sees that ``img`` is ``image``."""
    if query.role is None:
        return ""
    pool = [e for e in dom if query.tag is None or e.get("tag") == query.tag] or list(dom)
    roles = sorted({str(e["role"]) for e in pool if e.get("role")})
    whose = f"<{query.tag}> elements" if query.tag and len(pool) < len(dom) else "the page"
    return f"; roles present on {whose}: {', '.join(roles) or 'none'}"


def element_of(element: Element, dom: Dom) -> tuple[str, Box, int]:
    """How to find ``element`` of ``dom`` again in the live page it was taken from: its
    tag, its box, and how many elements with that tag and box come before it."""
    tag, box = str(element.get("tag")), _dom.box_of(element)
    before = 0
    for other in dom:
        if other is element:
            return tag, box, before
        before += other.get("tag") == tag and _dom.box_of(other) == box
    raise ValueError("the element is not in this snapshot")


def parse(selector: str) -> _Query | None:
    """The parsed selector, or None when it is outside the supported grammar."""
    m = _SELECTOR.match(selector.strip())
    if m is None or not any(m.group(k) for k in ("tag", "role", "label", "text")):
        return None
    tag = m.group("tag")
    return _Query(
        tag=None if tag in (None, "*") else tag,
        role=_unquote(m.group("role")),
        label=_unquote(m.group("label")),
        text=None if m.group("text") is None else _dom.normalise(m.group("text")[1:-1]),
        nth=int(m.group("nth") or 0),
    )


def select(query: _Query, dom: Dom) -> list[Element]:
    """Every element matching ``query``, in document order."""
    found = [e for e in dom if _attrs_match(query, e)]
    if query.text is None:
        return found
    needle = query.text
    holders = [_dom.box_of(e) for e in dom if needle in _dom.own_text(e)]
    return [e for e in found if any(_contains(_dom.box_of(e), b) for b in holders)]


def _attrs_match(query: _Query, element: Element) -> bool:
    return (
        (query.tag is None or element.get("tag") == query.tag)
        and (query.role is None or element.get("role") == query.role)
        and (query.label is None or element.get("name") == query.label)
    )


def _contains(outer: Box, inner: Box) -> bool:
    return (
        outer[0] <= inner[0]
        and outer[1] <= inner[1]
        and inner[0] + inner[2] <= outer[0] + outer[2]
        and inner[1] + inner[3] <= outer[1] + outer[3]
    )


def _unquote(value: str | None) -> str | None:
    if value is not None and len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value
