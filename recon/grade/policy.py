"""Policy score: does the submission respect network, asset and implementation constraints?

Violations, each with its evidence (one row per host, asset, image or tile):

- ``source_iframe``: a frame (iframe, frame, embed, object) whose ``src`` host is a
  ``source_hosts`` host. While the DOM snapshot carries no ``src`` for a frame, a
  non-asset request to a source host from a page with such a frame stands in for it
  (``inferred``).
- ``remote_hotlink``: an http(s) request off the origin, to a host not on
  ``allowed_hosts``, for an asset (path ending in one of ``ASSET_SUFFIXES``).
- ``disallowed_host``: any other request off the origin to a host not on
  ``allowed_hosts`` (fetch/XHR endpoints, documents, websockets...). Each request falls
  under exactly one of these three kinds; ``*.example.com`` allows every subdomain.
- ``asset_too_large``/``total_too_large``: served bytes over ``max_asset_bytes`` per
  asset, or over ``max_total_bytes`` in all.
- ``evidence_as_imagery``: an evidence screenshot used as page imagery, however it is
  drawn, by perceptual hash (``phash``): both pHash and dHash within
  ``evidence_hash_distance`` bits of an informative evidence hash (``_imagery``). Checked
  by the image's bytes on (a) every served raster, and (b) every raster the page paints
  from a ``data:`` URL (``<img>``/``srcset``, CSS backgrounds of elements and their
  ``::before``/``::after``, SVG ``<image>``, video posters, ``<input type=image>``,
  ``<object>``/``<embed>``, ``border-image``, ``list-style-image``, ``content``, rasters
  inside SVGs; in the document or an open shadow tree); and by the capture's pixels on
  (c) the box of each paint site: image-like elements and canvases (a match is a
  violation), CSS images whose bytes the grader could not read (a violation unless text
  a person can see shows in the box), and (d) the full-page render cut into tiles of the
  evidence's aspect ratio, where a matching tile counts only if image-like elements
  cover at least ``COVER_SHARE`` of it, or no visible text shows in it. A faithful
  rebuild also looks like the evidence, but its look comes from text and CSS, not from
  one picture. *Visible* text (``_ink``) is text a person can see: painted, with glyph
  alpha (colour alpha × the product of the ancestors' opacity) above 0, a WCAG contrast
  of at least 1.5:1 against what the capture shows behind it, a font of at least 6 px
  and at least 36 px² left after clipping. The metric card (``cards/policy.md``) lists
  what this is blind to.

Score::

    score = 0                                    if any present kind is in zero_on
          = max(0, 1 - Σ_{present kinds} penalty[kind] (default_penalty))   otherwise

A kind costs its penalty once however many violations show it; every violation is
still listed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args
from urllib.parse import urlsplit

import numpy as np

from recon.grade import _dom
from recon.grade._dom import Dom
from recon.grade._imagery import evidence_rows
from recon.grade.result import MetricResult
from recon.model.grading import Policy, ViolationKind

VERSION = "policy/1"
ORIGIN = "http://recon.invalid"
"""The render origin; equal to ``recon.render.capture.ORIGIN`` (a test keeps them equal)."""
KINDS: tuple[str, ...] = get_args(ViolationKind)
FRAME_TAGS = frozenset({"iframe", "frame", "embed", "object"})
_IMAGES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".svg", ".ico", ".bmp")
_FONTS_AND_CODE = (".woff", ".woff2", ".ttf", ".otf", ".eot", ".css", ".js", ".mjs")
_MEDIA = (".mp4", ".webm", ".mp3", ".ogg", ".wav")
ASSET_SUFFIXES = frozenset(_IMAGES + _FONTS_AND_CODE + _MEDIA)
LOCAL_SCHEMES = frozenset({"data", "blob", "about", "javascript", ""})
URLS_SHOWN = 5


@dataclass(frozen=True)
class PolicyScore(MetricResult):
    version: str = VERSION


def score(
    policy: Policy,
    network: Sequence[Any],
    *,
    dom: Dom = (),
    asset_sizes: Mapping[str, int] | None = None,
    images: Mapping[str, np.ndarray] | None = None,
    render: np.ndarray | None = None,
    evidence: Mapping[str, np.ndarray] | None = None,
    snapshots: Sequence[Dom] = (),
    origin: str = ORIGIN,
) -> PolicyScore:
    """Find every violation and score them.

    ``network`` is the capture's log of ``[url, outcome]`` (or ``NetworkEvent``s);
    ``asset_sizes`` and ``images`` (decoded RGB(A) arrays) are keyed by served URL;
    ``render`` is the full-page still whose DOM snapshot is ``dom``; ``evidence`` maps
    evidence PNG names to their pixels; ``snapshots`` are every DOM snapshot of the
    attempt, read for the ``data:`` images they paint (``(dom,)`` when empty).
    """
    rows = _requests(policy, network, dom, origin)
    rows += _sizes(policy, asset_sizes or {})
    found, hashed = evidence_rows(
        policy.evidence_hash_distance, images or {}, render, dom, evidence or {}, snapshots
    )
    return _score(policy, rows + found, hashed)


def _score(policy: Policy, rows: list[dict[str, Any]], hashed: dict[str, float]) -> PolicyScore:
    present = sorted({r["kind"] for r in rows})
    terms: dict[str, float] = {
        f"count_{k}": float(sum(r["kind"] == k for r in rows)) for k in KINDS
    }
    declared = {str(k): v for k, v in policy.penalty.items()}
    penalties = {k: declared.get(k, policy.default_penalty) for k in present}
    terms |= {f"penalty_{k}": float(p) for k, p in penalties.items()}
    zeroed = any(k in policy.zero_on for k in present)
    terms["penalty_sum"] = float(sum(penalties.values()))
    terms["zeroed"] = float(zeroed)
    terms |= hashed
    terms["score"] = 0.0 if zeroed else max(0.0, 1.0 - terms["penalty_sum"])
    for row in rows:
        row["zeroes"] = row["kind"] in policy.zero_on
    return PolicyScore(score=terms["score"], rows=rows, terms=terms)


# --- network: hosts, hotlinks, frames of the source ------------------------------------


def _requests(
    policy: Policy, network: Sequence[Any], dom: Dom, origin: str
) -> list[dict[str, Any]]:
    home = urlsplit(origin)
    frames = [e for e in dom if e.get("tag") in FRAME_TAGS]
    framed = [e for e in frames if _host_in(_host(str(e.get("src") or "")), policy.source_hosts)]
    rows = [_frame_row(e) for e in framed]
    seen = {str(e.get("src")) for e in framed}
    unknown_src = any("src" not in e for e in frames)
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for url, outcome in (_pair(event) for event in network):
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if (
            parts.scheme in LOCAL_SCHEMES
            or (parts.scheme, parts.netloc) == (home.scheme, home.netloc)
            or _host_in(host, policy.allowed_hosts)
            or url in seen
        ):
            continue
        kind = _request_kind(parts.scheme, parts.path, host, policy, unknown_src)
        groups.setdefault((kind, host), []).append((url, outcome))
    for (kind, host), hits in sorted(groups.items()):
        urls = sorted({u for u, _ in hits})
        rows.append(
            {
                "kind": kind,
                "host": host,
                "requests": len(hits),
                "urls": urls[:URLS_SHOWN],
                "outcomes": sorted({o for _, o in hits}),
                "inferred": kind == "source_iframe",
            }
        )
    return rows


def _pair(event: Any) -> tuple[str, str]:
    """``[url, outcome]`` as stored, or a ``NetworkEvent`` with ``url`` and ``outcome``."""
    if hasattr(event, "url"):
        return str(event.url), str(event.outcome)
    url, outcome = event
    return str(url), str(outcome)


def _request_kind(scheme: str, path: str, host: str, policy: Policy, framed: bool) -> str:
    asset = posixpath.splitext(path.lower())[1] in ASSET_SUFFIXES
    if framed and not asset and _host_in(host, policy.source_hosts):
        return "source_iframe"
    if scheme in ("http", "https") and asset:
        return "remote_hotlink"
    return "disallowed_host"


def _frame_row(element: Mapping[str, Any]) -> dict[str, Any]:
    src = str(element.get("src"))
    return {
        "kind": "source_iframe",
        "host": _host(src),
        "tag": element.get("tag"),
        "src": src,
        "box": list(_dom.box_of(element)),
        "inferred": False,
    }


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def _host_in(host: str, patterns: Sequence[str]) -> bool:
    """``host`` equals a pattern, or is a subdomain of a ``*.suffix`` pattern."""
    if not host:
        return False
    for pattern in (p.lower() for p in patterns):
        if host == pattern or (pattern.startswith("*.") and host.endswith(pattern[1:])):
            return True
    return False


# --- sizes -----------------------------------------------------------------------------


def _sizes(policy: Policy, sizes: Mapping[str, int]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {"kind": "asset_too_large", "url": url, "bytes": int(size), "limit": policy.max_asset_bytes}
        for url, size in sorted(sizes.items())
        if size > policy.max_asset_bytes
    ]
    total = sum(int(s) for s in sizes.values())
    if total > policy.max_total_bytes:
        rows.append(
            {
                "kind": "total_too_large",
                "bytes": total,
                "assets": len(sizes),
                "limit": policy.max_total_bytes,
            }
        )
    return rows
