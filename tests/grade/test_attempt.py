"""recon.grade.attempt: the seven dimensions of one attempt, assembled with every term."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np
import pytest

from recon.grade.attempt import Build, Probed, View, decode_png, grade
from recon.grade.workflow import key
from recon.model.grading import Grading
from recon.model.matrix import Point
from recon.model.viewport import Viewport
from tests.grade.synthetic import WIDTH, draw, landing, recoloured, without

GRADING = Grading.model_validate(
    {
        "schema_version": 1,
        "regions": [{"id": "hero", "selector": "section", "viewport": "desktop"}],
        "assertions": [
            {"id": "title", "locator": {"role": "heading"}, "expect": "visible"},
            {"id": "cards", "locator": {"css": "article"}, "expect": "count", "value": 3},
        ],
        "workflows": [
            {
                "id": "w",
                "steps": [
                    {"click": {"text": "Docs"}},
                    {
                        "id": "docs",
                        "compare_oracle": True,
                        "preserve": "reload",
                        "assertions": [
                            {"id": "d", "locator": {"text": "Docs"}, "expect": "visible"}
                        ],
                    },
                ],
            }
        ],
        "preservation": {"regions": ["hero"]},
        "weights": {
            "global_visual": 0.3,
            "regional_visual": 0.2,
            "functional": 0.1,
            "responsive": 0.1,
            "workflow": 0.1,
            "preservation": 0.1,
            "policy": 0.1,
        },
    }
)
POINTS = [("root.desktop.default", "desktop", "default"), ("root.desktop.open", "desktop", "open")]
ROWS_OK = [{"id": "title", "passed": True, "observed": ""}, {"id": "cards", "passed": True}]
FLOW_OK = {
    key("w", "docs"): [{"id": "d", "passed": True}],
    key("w", "docs", preserved=True): [{"id": "d", "passed": True}],
}


def build(dom: list[dict[str, Any]], *, failed: str | None = None, **probed: Any) -> Build:
    image = draw(dom)
    views = {
        pid: View(
            point=Point("/", Viewport(vp, WIDTH, 900), state),
            image=None if failed == pid else image,
            dom=dom,
            network=[["http://recon.invalid/", "served"]],
            failure="steps[0] click: no matching element" if failed == pid else None,
        )
        for pid, vp, state in POINTS
    }
    defaults: dict[str, Any] = {"assertions": {"desktop": ROWS_OK}, "workflows": FLOW_OK,
                                "screenshots": {key("w", "docs"): image[:600]}}  # fmt: skip
    return Build(views, Probed(**(defaults | probed)))


REFERENCE = build(landing())


def graded(candidate: Build, starter: Build | None = None) -> dict[str, Any]:
    return grade(
        GRADING,
        candidate,
        REFERENCE,
        starter or build(without(landing(), 100, 900), assertions={}),
        first_viewport="desktop",
        evidence={},
        served={},
    )


def test_the_reference_scores_exactly_one_on_every_dimension() -> None:
    table = graded(REFERENCE)
    assert table["total"] == 1.0
    assert set(table["dimensions"].values()) == {1.0}
    assert set(table["dimensions"]) == set(GRADING.weights)
    products = [row["product"] for row in table["arithmetic"]]
    assert sum(products) == pytest.approx(table["total"])
    assert all(table["versions"][d] for d in table["dimensions"])
    assert table["captures"] == {} and table["probe_failures"] == {}


def test_each_defect_costs_its_dimension() -> None:
    recolour = graded(build(recoloured(landing(), "section", "rgb(200, 30, 30)")))
    assert recolour["dimensions"]["regional_visual"] < 1.0
    assert recolour["dimensions"]["global_visual"] < 1.0
    failing = graded(build(landing(), assertions={"desktop": ROWS_OK[:1]}))
    assert failing["dimensions"]["functional"] == pytest.approx(0.5)
    assert failing["dimensions"]["responsive"] < 1.0  # the assertions are layout checks too
    lost = dict(FLOW_OK) | {key("w", "docs", preserved=True): [{"id": "d", "passed": False}]}
    assert graded(build(landing(), workflows=lost))["dimensions"]["workflow"] == 0.5
    # The hero region passed in the starter; losing it is a preservation break.
    starter = build(landing(), assertions={})
    broken = graded(build(without(landing(), 100, 380)), starter)
    assert broken["dimensions"]["preservation"] == 0.0
    assert graded(REFERENCE, starter)["dimensions"]["preservation"] == 1.0


def test_a_failed_capture_scores_zero_at_that_point_and_is_recorded() -> None:
    table = graded(build(landing(), failed="root.desktop.open"))
    rows = {r["point"]: r for r in table["details"]["global_visual"]}
    assert rows["root.desktop.open"]["score"] == 0.0
    assert rows["root.desktop.default"]["score"] == 1.0
    assert table["dimensions"]["global_visual"] == 0.5
    assert table["captures"] == {"root.desktop.open": "steps[0] click: no matching element"}


def test_a_blank_candidate_scores_near_zero_and_identical_inputs_repeat_bit_for_bit() -> None:
    blank_dom = [landing()[0]]
    blank = graded(build(blank_dom, assertions={}, workflows={}, screenshots={}))
    assert blank["total"] < 0.35 and blank["dimensions"]["global_visual"] < 0.1
    again = graded(build(blank_dom, assertions={}, workflows={}, screenshots={}))
    assert again == blank


def test_oracle_checkpoint_comparison_uses_the_screenshots() -> None:
    other = np.full((600, WIDTH, 3), 255, np.uint8)
    table = graded(build(landing(), screenshots={key("w", "docs"): other}))
    assert table["dimensions"]["workflow"] < 1.0


def test_regions_resolve_on_the_contracts_first_route_not_the_alphabetically_first() -> None:
    """Point ids sort ``about.html...`` before ``root...``; the first route is ``/``."""
    home, about = landing(), without(landing(), 100, 900)

    def two_routes(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> Build:
        views = {
            pid: View(
                point=Point(route, Viewport("desktop", WIDTH, 900)),
                image=draw(dom),
                dom=dom,
                network=[["http://recon.invalid/", "served"]],
                failure=None,
            )
            for pid, route, dom in (
                ("root.desktop.default", "/", first),
                ("about.html.desktop.default", "/about.html", second),
            )
        }
        return Build(views, Probed(assertions={"desktop": ROWS_OK}, workflows=FLOW_OK,
                                   screenshots={key("w", "docs"): draw(first)[:600]}))  # fmt: skip

    reference = two_routes(home, about)
    table = grade(GRADING, reference, reference, reference, first_viewport="desktop",
                  evidence={}, served={})  # fmt: skip
    assert table["dimensions"]["regional_visual"] == 1.0
    swapped = grade(GRADING, two_routes(about, home), reference, reference,
                    first_viewport="desktop", evidence={}, served={})  # fmt: skip
    assert swapped["dimensions"]["regional_visual"] < 1.0


def test_a_png_past_the_decompression_bomb_bound_decodes_to_no_image() -> None:
    """A still declaring 10^5 x 10^5 pixels is an undecodable one (the point fails), not an
    exception out of the grade cell; the renderer's stills are far smaller."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)
    bomb = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b"")
    assert decode_png(bomb) is None
