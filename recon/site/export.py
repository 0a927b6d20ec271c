"""The static site of a release: pure bytes out of the release JSON and public material.

The exporter sits outside the sealed evaluation boundary (DESIGN §5.3). It sees only what
its arguments carry: the public ``ReleaseResult`` (scores, each dimension's value and
allow-listed public terms, checks as pass/fail with a public label, digests, counts), each
case's public package (facts from the allow-list, brief, contract, evidence), the
Candidate's captures of each attempt and its checkpoint screenshots. Oracle references,
selectors, thresholds, sealed weights and weight × value products are never arguments,
and templates get only what :func:`recon.site.allow.public` lets through.

Pages: ``index.html`` (leaderboard), ``entries/<entry>.html``, ``cases/<case>.html``,
``runs/<attempt>.html``, ``transcripts/<attempt>.html`` (a gateway attempt's calls, turn by
turn, linked from its run page), ``reliability.html``, ``manifest.html`` (which shows the
manifest the export writes beside the pages, ``data/manifest.js``: the manifest holds this
site's digest, so the site cannot hold it), ``style.css``, ``site.js``, ``favicon.svg``
(so that no browser asks for a ``/favicon.ico`` outside the site) and ``img/``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from recon.errors import HarnessError
from recon.model.result import AttemptSummary, ReleaseResult
from recon.model.transcript import Transcript
from recon.site.cases import PublicCase, case_page
from recon.site.images import Images
from recon.site.pages import entry_page, header, leaderboard, reliability_page
from recon.site.render import asset, page
from recon.site.runs import Heatmaps, run_page
from recon.site.transcript import transcript_page

SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
ASSETS = ("style.css", "site.js", "favicon.svg")


def _check_ids(kind: str, ids: list[str]) -> None:
    seen: dict[str, str] = {}
    for ident in ids:
        if not SAFE_ID.match(ident):
            raise HarnessError(
                f"release JSON: {kind} id {ident!r} cannot name a page; "
                "ids use letters, digits, '.', '_' and '-' only"
            )
        folded = ident.lower()
        if folded in seen:
            raise HarnessError(
                f"release JSON: {kind} ids {seen[folded]!r} and {ident!r} collide; "
                f"every {kind} needs its own id (case-insensitively)"
            )
        seen[folded] = ident


def _render(template: str, base: Mapping[str, Any], root: str, **context: Any) -> bytes:
    return page(template, {"site": base, "root": root, **context})


def build_site(
    result: ReleaseResult,
    cases: Mapping[str, PublicCase],
    captures: Mapping[str, Mapping[str, bytes]],
    shots: Mapping[str, bytes],
    transcripts: Mapping[str, Transcript] | None = None,
) -> dict[str, bytes]:
    """Every file of the site, relative path -> bytes; identical inputs give identical bytes.

    ``cases`` maps case id -> its public package; ``captures`` maps attempt id -> matrix
    point id (``root.desktop.default``) -> the full-page PNG of the Candidate's render;
    ``shots`` maps the digest of a Candidate checkpoint screenshot (as the release JSON's
    checks name it) -> its PNG; ``transcripts`` maps the id of an attempt through the model
    gateway -> its transcript. Images are written only when a page shows them.
    """
    transcripts = transcripts or {}
    _check_ids("attempt", [a.id for a in result.attempts])
    _check_ids("entry", [e.entry for e in result.entries])
    _check_ids("case", list(result.active_cases))
    base = header(result)
    images, heat = Images(), Heatmaps()
    files: dict[str, bytes] = {name: asset(name) for name in ASSETS}
    files["index.html"] = _render("index.html", base, "", board=leaderboard(result))
    files["reliability.html"] = _render("reliability.html", base, "", rel=reliability_page(result))
    files["manifest.html"] = _render("manifest.html", base, "")
    for entry in result.entries:
        files[f"entries/{entry.entry}.html"] = _render(
            "entry.html", base, "../", page=entry_page(result, entry)
        )
    for case_id in result.active_cases:
        public_case = cases.get(case_id, PublicCase(facts={}, bundle=""))
        context = case_page(result, case_id, public_case, images.add)
        files[f"cases/{case_id}.html"] = _render("case.html", base, "../", page=context)
    for attempt in sorted(result.attempts, key=lambda a: a.id):
        context = _run(result, attempt, cases, captures, shots, images, heat)
        made = transcripts.get(attempt.id)
        context["transcript"] = f"../transcripts/{attempt.id}.html" if made else None
        files[f"runs/{attempt.id}.html"] = _render("run.html", base, "../", page=context)
        if made is not None:
            shown = transcript_page(context["attempt"], made)
            files[f"transcripts/{attempt.id}.html"] = _render(
                "transcript.html", base, "../", page=shown
            )
    files.update(images.files())
    return dict(sorted(files.items()))


def _run(
    result: ReleaseResult,
    attempt: AttemptSummary,
    cases: Mapping[str, PublicCase],
    captures: Mapping[str, Mapping[str, bytes]],
    shots: Mapping[str, bytes],
    images: Images,
    heat: Heatmaps,
) -> dict[str, Any]:
    case = cases.get(attempt.case)
    evidence = case.evidence if case is not None else {}
    captured = captures.get(attempt.id, {})
    return run_page(result, attempt, evidence, captured, shots, images.add, heat)
