"""The blind pair-collection page: a static folder that works offline from disk.

``<out>/site/`` is what raters open (``index.html``, the site's stylesheet, ``collect.js``
and the images); ``<out>/pairs.key.json`` is the sealed key, written beside the folder and
never inside it. The page names every pair and image by an opaque id (``p0007``,
``img/p0007-l.png``): no attempt id, entry name or capture digest is in its DOM or its
script. Its export carries the pair ids; ``recon calibrate ingest`` maps them back to
capture digests through the key. The page is rendered with the site's Jinja2 environment
(autoescape, strict undefined) and reuses its stylesheet.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, PackageLoader

from recon.calibrate.pairs import Chosen
from recon.errors import ConfigError
from recon.model import PairKey
from recon.model.matrix import evidence_still
from recon.model.preferences import KeyedPair
from recon.site.render import asset
from recon.site.render import environment as site_environment
from recon.store import Store, write_atomic

KEY_FILE = "pairs.key.json"
SITE = "site"


@dataclass(frozen=True)
class Written:
    page: Path
    key: Path
    pairs: int


@cache
def environment() -> Environment:
    """The site's environment (autoescape, strict undefined, its filters), finding this
    package's templates first and the site's after them."""
    loaders = [
        PackageLoader("recon.calibrate", "templates"),
        PackageLoader("recon.site", "templates"),
    ]
    return site_environment().overlay(loader=ChoiceLoader(loaders))


def _evidence(cases: Path, case: str, point: str, site: Path, seen: dict[Path, str]) -> list[str]:
    source = cases / case / "public" / "evidence" / evidence_still(point)
    if not source.is_file():
        return []
    if source not in seen:
        seen[source] = f"ev/e{len(seen) + 1:03d}.png"
        _put(site / seen[source], source.read_bytes())
    return [seen[source]]


def write(
    out: Path, release: str, chosen: Sequence[Chosen], store: Store, cases: Path, seed: int
) -> Written:
    """Write the page folder and the key; ``out`` must be new or empty."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"--out {out}: exists and is not an empty folder; choose a new one")
    site = out / SITE
    session = secrets.token_hex(8)
    seen: dict[Path, str] = {}
    shown: list[dict[str, Any]] = []
    keyed: dict[str, KeyedPair] = {}
    for pair in chosen:
        for side, shot in (("l", pair.left), ("r", pair.right)):
            _put(site / "img" / f"{pair.id}-{side}.png", store.read_bytes(shot.digest))
        shown.append(
            {
                "id": pair.id,
                "where": f"{pair.left.case} · {pair.left.point}",
                "evidence": _evidence(cases, pair.left.case, pair.left.point, site, seen),
                "left": f"img/{pair.id}-l.png",
                "right": f"img/{pair.id}-r.png",
            }
        )
        keyed[pair.id] = KeyedPair(
            case=pair.left.case,
            point=pair.left.point,
            left=pair.left.digest,
            right=pair.right.digest,
            seed=pair.seed,
            repeat_of=pair.repeat_of,
        )
    context = {
        "release": release,
        "session": session,
        "count": len(shown),
        "data": json.dumps({"session": session, "pairs": shown}, sort_keys=True),
    }
    page = environment().get_template("collect.html").render(**context).encode("utf-8")
    _put(site / "index.html", page)
    write_atomic(site / "style.css", asset("style.css") + asset_of("collect.css"))
    write_atomic(site / "collect.js", asset_of("collect.js"))
    key = PairKey(release=release, session=session, seed=seed, pairs=keyed)
    text = json.dumps(key.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    write_atomic(out / KEY_FILE, text.encode("utf-8"))
    return Written(site / "index.html", out / KEY_FILE, len(shown))


def _put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)


def asset_of(name: str) -> bytes:
    loader = environment().loader
    assert loader is not None
    source, _, _ = loader.get_source(environment(), name)
    return source.encode("utf-8")
