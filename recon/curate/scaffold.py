"""``recon case new <id>``: a case whose files load and validate, with comments that say
what to fill in.

The scaffold is a real, small case: a reference page with a heading and a paragraph, a
starter that has only the paragraph, one region, three sealed assertions (one marked
``discriminates: true``: it fails on the starter) and provenance pinning the reference
as a ``local`` source. The curator replaces each part; ``recon case freeze`` replaces the
reference and its provenance from a published artifact, ``recon case evidence``
renders the evidence.
"""

from __future__ import annotations

import json
from pathlib import Path

from recon.curate.pin import artifacts, tree_integrity
from recon.errors import ConfigError
from recon.store import write_atomic

CASE_YAML = """\
schema_version: 1
# The case's identity (recon.model.case.Case). Bump `version` whenever the reference,
# the contract or the sealed checks change: attempts of the old version stay valid.
id: {id}
version: 1
title: "{id}: replace with what the page is (and the artifact's version)"
track: frozen-evidence/reconstruct
active: true
evidence_conditions: [full]
"""

BRIEF = """\
# {id}

<!-- The brief is public: the Candidate reads it with the evidence. Say what to build,
which routes, viewports and states the contract lists, and what the starter already
has. Never mention sealed material (checks, selectors, thresholds). -->

Rebuild the page shown in `evidence/` inside `site/`: a heading above the paragraph the
starter already has.
"""

CONTRACT = """\
schema_version: 1
# The public matrix (recon.model.contract.Contract): routes x viewports x states.
routes: ["/"]                 # URL paths the build serves, each a matrix point
viewports: [desktop, mobile]  # names of recon.model.contract.VIEWPORTS
test_ids: []                  # data-testid values a step may use as a locator
states: []                    # named states reached by steps, e.g.
#  - name: menu-open
#    route: /
#    steps:
#      - click: {{role: button, name: Menu}}
build:
  command: []                 # e.g. [npm, run, build]; runs offline, in the workspace
  output: site                # the folder the build leaves, served at /
"""

GRADING = """\
schema_version: 1
# Sealed checks (recon.model.grading.Grading); never shown to a Candidate.
# `recon case inspect {id} --selector SEL` shows what a selector matches, with
# chromium's roles and names (an <img> is role `image`, a <header> is `banner`).
regions:                      # high-value regions, scored by regional visual
  - id: heading
    selector: 'h1:has-text("Replace me")'
    viewport: desktop
    weight: 1.0
assertions:                   # functional checks, at every contract viewport
  - id: heading-shown
    label: the heading is shown
    locator: {{role: heading, name: Replace me}}
    expect: visible
    discriminates: true       # `recon validate` requires it to fail on the starter
  - id: one-paragraph
    label: the page keeps one paragraph
    locator: {{css: "main > p"}}
    expect: count
    value: 1
workflows: []                 # interaction sequences with checkpoints
preservation:                 # checks the starter passes and a solution must keep
  assertions:
    - id: paragraph-kept
      label: the starter's paragraph is kept
      locator: {{text: Replace this paragraph.}}
      expect: visible
policy: {{}}
weights:                      # sealed per case version; they sum to 1
  global_visual: 0.3
  regional_visual: 0.2
  functional: 0.2
  responsive: 0.15
  workflow: 0.0
  preservation: 0.05
  policy: 0.1
"""

PAGE = """\
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{id}</title>
<!-- {what} -->
<style>body {{ font-family: sans-serif; margin: 2rem; }} h1 {{ color: #234; }}</style>
</head>
<body>
<main>
{heading}<p>Replace this paragraph.</p>
</main>
</body>
</html>
"""
REFERENCE_NOTE = "The sealed reference: replace it with `recon case freeze ID --from SOURCE`."
STARTER_NOTE = "The public starter: what the Candidate starts from."

SCAFFOLD_NOTE = "Scaffolded by `recon case new`"
PROVENANCE_NOTE = (
    f"{SCAFFOLD_NOTE}: the reference is a placeholder authored locally. "
    "Replace it with `recon case freeze {id} --from SOURCE` (a folder, npm:<pkg>@<ver>, "
    "deb:<pkg>=<ver>), which rewrites this file with the source's pin and every file's blake3."
)


def scaffold(root: Path, case_id: str) -> list[Path]:
    """Write the case folder ``cases/<case_id>``; refuse an existing one. The files written."""
    folder = root / "cases" / case_id
    if folder.exists():
        raise ConfigError(f"{folder}: exists already; pick another id or remove it")
    reference_page = PAGE.format(
        id=case_id, what=REFERENCE_NOTE, heading="<h1>Replace me</h1>\n"
    ).encode()
    starter_page = PAGE.format(id=case_id, what=STARTER_NOTE, heading="").encode()
    files: dict[str, bytes] = {
        "case.yaml": CASE_YAML.format(id=case_id).encode(),
        "public/brief.md": BRIEF.format(id=case_id).encode(),
        "public/contract.yaml": CONTRACT.encode(),
        "public/starter/site/index.html": starter_page,
        "sealed/grading.yaml": GRADING.format(id=case_id).encode(),
        "sealed/reference/index.html": reference_page,
        "provenance.yaml": provenance_yaml(case_id, {"index.html": reference_page}).encode(),
    }
    written = []
    for rel, data in files.items():
        write_atomic(folder / rel, data)
        written.append(folder / rel)
    (folder / "public" / "evidence").mkdir(parents=True, exist_ok=True)
    return written


def provenance_yaml(case_id: str, reference: dict[str, bytes]) -> str:
    """The scaffold's provenance: a local, authored source pinning every reference file."""
    pinned = artifacts(reference, "", authored=True, how="authored by `recon case new`")
    lines = [
        "schema_version: 2",
        "# Where the reference came from (recon.model.provenance.Provenance).",
        "publisher: replace with who published the artifact",
        "kind: local                 # npm, deb, wheel, local or generator",
        f"package: {case_id}",
        "version: '1'",
        "registry: local",
        f"tarball_integrity: {tree_integrity(reference)}",
        "license: replace with the artifact's licence (SPDX id)",
        f"notes: {json.dumps(PROVENANCE_NOTE.format(id=case_id))}",
        "artifacts:",
    ]
    for a in pinned:
        lines += [f"- path: {a.path}", f"  source: {json.dumps(a.source)}", "  authored: true"]
        lines.append(f"  blake3: {a.blake3}")
    return "\n".join(lines) + "\n"
