"""The page of ``recon site diff`` lists a retried slot's tries, as ``recon diff`` does."""

from __future__ import annotations

import re

from recon.release.diff import diff
from recon.release.tries import tries_of
from recon.site.diff_page import diff_page
from tests.release.test_diff import LOST, RETRIED, d, manifest, retried_sides


def test_a_retried_slot_shows_each_side_s_tries() -> None:
    old, new, failed = retried_sides()
    tries = (tries_of(old, lambda digest: None), tries_of(new, {d("failed-0"): failed}.get))
    page = diff_page(diff(manifest(), old, manifest(release_json=d("retried")), new, tries=tries))
    text = " ".join(re.sub(r"<[^>]+>", " ", page.decode()).split())
    assert f"{RETRIED} total 0.7000 0.7000" in text
    assert "tries 1 2" in text
    assert "before try 0: valid" in text
    assert f"after try 0: harness_failure, retried: {LOST}" in text
    assert "after try 1: valid, retry of try 0" in text
