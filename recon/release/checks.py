"""An attempt's checks as published: public label and pass/fail, nothing else (DESIGN §5.3).

The grade table (sealed side) keeps, per functional assertion, its id, weight, pass/fail
and observed value, and per workflow checkpoint whether it was reached and kept. What
leaves it is the label the curator wrote for the public (or the fallback naming the
check's kind and position), whether it passed and, for a checkpoint, the digest of the
Candidate's screenshot there. Ids, weights and observed values (which equal the sealed
expected value whenever the check passes) stay in the store.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recon.model.grading import checkpoint_key
from recon.model.result import PublicCheck


def public_checks(grade: Mapping[str, Any]) -> list[PublicCheck]:
    """The functional rows, then each workflow's checkpoints in order."""
    details = grade.get("details", {})
    shots = grade.get("checkpoint_shots", {})
    checks = [
        PublicCheck(dimension="functional", label=str(row["label"]), passed=bool(row["passed"]))
        for row in details.get("functional", [])
        if "label" in row
    ]
    for flow in details.get("workflow", []):
        if "label" not in flow:
            continue
        for cp in flow.get("checkpoints", []):
            checks.append(
                PublicCheck(
                    dimension="workflow",
                    group=str(flow["label"]),
                    label=str(cp["label"]),
                    passed=bool(cp["reached"]),
                    kept=bool(cp["preserved"]) if "preserve" in cp else None,
                    screenshot=shots.get(checkpoint_key(flow["id"], cp["id"])),
                )
            )
    return checks
