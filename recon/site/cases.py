"""Case pages (``cases/<case>.html``): the public package only, and how entries did.

A case page shows the case's identity and the attribution part of its provenance (made
by the allow-list when the site cell reads the case), its public brief, the evidence
still of every matrix point, its motion evidence as animated images, and the score
distribution of every entry on it. Nothing sealed is an input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from recon.model import Case, Contract, Provenance, parse_yaml
from recon.model.base import validate
from recon.model.result import ReleaseResult
from recon.site.allow import public
from recon.site.brief import render as render_brief
from recon.site.pages import ordered
from recon.site.points import matrix, motion

AddImage = Callable[[bytes, str], str]
Context = dict[str, Any]


FACTS = ("id", "version", "title", "track", "evidence_conditions", "provenance", "files")


def case_facts(case: Case | None, provenance: Provenance | None) -> dict[str, Any]:
    """A case's public facts: its allow-listed identity, the attribution part of its
    provenance, and how many of the reference's pinned files were copied from published
    packages or authored (a count: the artifact list itself names sealed paths)."""
    facts: dict[str, Any] = dict.fromkeys(FACTS)
    if case is not None:
        facts |= public(case)
    if provenance is not None:
        authored = sum(a.authored for a in provenance.artifacts)
        facts["provenance"] = public(provenance)
        facts["files"] = {"authored": authored, "copied": len(provenance.artifacts) - authored}
    return facts


@dataclass(frozen=True)
class PublicCase:
    """What the site may show of a case: allow-listed facts, the evidence bundle's digest,
    its brief, contract and ``evidence/`` files (by name inside ``evidence/``)."""

    facts: Mapping[str, Any]
    bundle: str
    brief: str = ""
    contract: Contract | None = None
    evidence: Mapping[str, bytes] = field(default_factory=dict)

    @classmethod
    def from_bundle(
        cls, facts: Mapping[str, Any], bundle: str, files: Mapping[str, bytes]
    ) -> PublicCase:
        """From the bundle's files by path (``brief.md``, ``contract.yaml``, ``evidence/…``)."""
        contract = None
        if "contract.yaml" in files:
            text = files["contract.yaml"].decode("utf-8")
            contract = validate(Contract, parse_yaml(text, "contract.yaml"), "contract.yaml")
        return cls(
            facts=facts,
            bundle=bundle,
            brief=files.get("brief.md", b"").decode("utf-8", errors="replace"),
            contract=contract,
            evidence={
                p.removeprefix("evidence/"): data
                for p, data in files.items()
                if p.startswith("evidence/")
            },
        )


def _distribution(result: ReleaseResult, case_id: str) -> list[Context]:
    rows = []
    for entry in ordered(result.entries):
        found = next((c for c in entry.cases if c.case == case_id), None)
        if found is None:
            continue
        data = public(found)
        scored = [s for s in data["per_attempt"] if s is not None]
        rows.append(
            data
            | {
                "entry": entry.entry,
                "scored": scored,
                "unscored": len(data["per_attempt"]) - len(scored),
                "total": sum(data["attempts"].values()),
            }
        )
    return rows


def case_page(result: ReleaseResult, case_id: str, case: PublicCase, add: AddImage) -> Context:
    ev = case.evidence
    points = []
    for pt in matrix(case.contract, ev) if case.contract is not None else []:
        image = add(ev[pt.evidence], f"evidence {case_id}/{pt.evidence}") if pt.evidence else None
        points.append(pt.context() | {"image": image})
    return {
        "case": dict.fromkeys(FACTS) | dict(case.facts) | {"id": case_id},
        "bundle": case.bundle,
        "brief": render_brief(case.brief),
        "points": points,
        "motion": [{"name": n, "image": add(ev[n], f"motion {case_id}/{n}")} for n in motion(ev)],
        "distribution": _distribution(result, case_id),
        "attempts": [
            public(a) for a in sorted(result.attempts, key=lambda a: a.id) if a.case == case_id
        ],
    }
