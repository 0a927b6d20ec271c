"""Per-kind code digests are derived, and cover exactly what computes each kind (issue 9).

Fast: no browser, no engine. The package is copied to a temporary folder and every one
of its files is edited in turn; the kinds whose code digest moves must be exactly those
the table below names for that file.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
from pathlib import Path

import pytest

from recon.pipeline import codegraph
from recon.pipeline.codegraph import CodeGraph
from recon.pipeline.keys import CODE_FREE, KIND_MODULES, Codes
from recon.store import StatCache

PACKAGE = Path(__file__).resolve().parents[2] / "recon"
CODE_KINDS = frozenset(KIND_MODULES) - CODE_FREE
RENDER = frozenset({"oracle", "capture", "probe"})
POINT = RENDER | {"grade", "aggregate", "site"}
"""The kinds that read a contract's points, states and checks, or show them."""
NONE: frozenset[str] = frozenset()

# File pattern (relative to recon/) -> the kinds an edit of it must re-key; first match wins.
TABLE: list[tuple[str, frozenset[str]]] = [
    # what every cell reads and writes through: the store's objects, the record formats,
    # the kind table, the errors. A package's face is lazy (recon._lazy): `from recon.model
    # import Case` runs recon/model/case.py, not every module of the package.
    ("__init__.py", CODE_KINDS),
    ("errors.py", CODE_KINDS),
    ("_lazy.py", CODE_KINDS),
    # the contract, the one Locator, Step and Viewport, and the public labels of checks:
    # what is rendered, probed, graded, aggregated and shown
    ("model/contract.py", POINT),
    ("model/interaction.py", POINT),
    ("model/labels.py", POINT),
    ("model/viewport.py", POINT),
    # the matrix point names what the render kinds capture, the grader reads and the site
    # shows (a probe runs the contract's checks, not its points)
    ("model/matrix.py", frozenset({"oracle", "capture", "grade", "site"})),
    ("model/grading.py", frozenset({"probe", "grade", "aggregate", "site"})),  # sealed checks
    ("model/calibration.py", frozenset({"grade"})),  # a release's weights and thresholds
    ("model/release.py", frozenset({"aggregate"})),  # the aggregation rule
    ("model/withdrawal.py", frozenset({"aggregate"})),  # who counts in no denominator
    # the release JSON and what the site publishes of entries and their attempts
    ("model/result.py", frozenset({"aggregate", "site"})),
    ("model/public.py", frozenset({"aggregate", "site"})),
    ("model/entry.py", frozenset({"aggregate", "site"})),
    ("model/egress.py", frozenset({"aggregate", "site"})),
    ("model/placeholders.py", frozenset({"aggregate", "site"})),
    ("model/transcript.py", frozenset({"site"})),  # a gateway attempt's page, no other kind's
    # formats no cell reads: locks, preference judgements, a study's judgement file (issue
    # 28), progress snapshots, stale marks, and the list of schemas `recon schema` exports
    ("model/lock.py", NONE),
    ("model/preferences.py", NONE),
    ("model/study.py", NONE),
    ("model/progress.py", NONE),
    ("model/stale.py", NONE),
    ("model/schemas.py", NONE),
    ("model/*", CODE_KINDS),
    ("store/tree.py", CODE_KINDS - {"image", "manifest"}),  # the kinds that write trees
    # the action cache, the store guard, gc and verify, the stat cache: the runner's
    ("store/actions.py", NONE),
    ("store/guard.py", NONE),
    ("store/maintenance.py", NONE),
    ("store/statcache.py", NONE),
    ("store/*", CODE_KINDS),
    ("pipeline/__init__.py", CODE_KINDS),
    ("pipeline/kinds/__init__.py", CODE_KINDS),
    ("pipeline/kinds/_base.py", CODE_KINDS),
    ("pipeline/kinds/_browsers.py", RENDER),  # the run's browser pool, of its settings
    # one kind module each; the render module writes captures for oracle and capture
    ("pipeline/kinds/evidence.py", frozenset({"evidence"})),
    ("pipeline/kinds/workspace.py", frozenset({"workspace"})),
    ("pipeline/kinds/image.py", frozenset({"image"})),
    ("pipeline/kinds/attempt.py", frozenset()),  # attempts carry no harness code
    ("pipeline/kinds/render.py", frozenset({"oracle", "capture"})),
    ("pipeline/kinds/probe.py", frozenset({"probe"})),
    ("pipeline/kinds/grade.py", frozenset({"grade"})),
    ("pipeline/kinds/release.py", frozenset({"aggregate"})),
    ("pipeline/kinds/site.py", frozenset({"site"})),
    ("pipeline/kinds/manifest.py", frozenset({"manifest"})),
    ("pipeline/*", frozenset()),  # the runner, keys, graph and doit glue compute no output
    # the project loader is read by the runner, never imported by a kind
    ("project/*", frozenset()),
    # the renderer (its browser and fonts too: the kinds run on the runtime's BrowserPool)
    # re-keys every render kind, the grader only grades
    ("render/inspect.py", NONE),  # `recon case inspect`: a command, no cell
    ("render/motion.py", NONE),  # motion strips: the curator's evidence, no cell
    ("render/capture.py", frozenset({"oracle", "capture"})),  # stills, snapshot, network log
    ("render/stills.py", frozenset({"oracle", "capture"})),
    ("render/probe.py", frozenset({"probe"})),  # sealed checks and workflows
    ("render/*", RENDER),
    ("grade/cards/*", frozenset()),  # metric cards: documents, not code
    # the site's difference heatmap is the grader's per-pixel SSIM (importing it runs the
    # package's __init__, whose names are lazy: no metric is in the site's code)
    ("grade/__init__.py", frozenset({"grade", "site"})),
    ("grade/_ssim.py", frozenset({"grade", "site"})),
    ("grade/*", frozenset({"grade"})),
    ("curate/__init__.py", frozenset({"evidence", "workspace"})),
    ("curate/bundle.py", frozenset({"evidence", "workspace"})),
    ("curate/*", frozenset()),  # curator tools: evidence rendering, the ladder
    # the image is built from the recipe and the offline store; the backends, the egress
    # proxy and the output rule run attempts, which carry no harness code
    ("sandbox/__init__.py", frozenset({"image"})),
    ("sandbox/rootfs.py", frozenset({"image"})),
    ("sandbox/deps.py", frozenset({"image"})),
    ("sandbox/deps_registry.py", frozenset({"image"})),
    ("sandbox/offline_deps.yaml", frozenset({"image"})),
    ("sandbox/engine.py", frozenset({"image"})),
    ("sandbox/*", NONE),
    # the scripted model is served to attempts, which carry no harness code
    ("agents/model_server.py", frozenset()),
    ("agents/model_script.py", frozenset()),
    ("agents/scripted.py", frozenset()),
    ("agents/*", frozenset()),
    ("calibrate/*", frozenset()),  # preference collection and the fit: commands, no cell kind
    ("release/__init__.py", frozenset({"aggregate", "manifest"})),
    ("release/aggregate.py", frozenset({"aggregate"})),
    ("release/checks.py", frozenset({"aggregate"})),
    ("release/reliability.py", frozenset({"aggregate"})),
    ("release/uncertainty.py", frozenset({"aggregate"})),
    ("release/withdrawals.py", frozenset({"aggregate"})),
    ("release/withdrawn.py", frozenset({"aggregate"})),
    ("release/manifest.py", frozenset({"manifest"})),
    ("release/*", frozenset()),
    ("site/diff_page.py", frozenset()),
    ("site/data.py", frozenset()),  # written by the export, beside the site tree
    ("site/stale.py", frozenset()),  # the stale banner: written by publish, on a failed build
    ("site/*", frozenset({"site"})),
    # the transcript page reads a recording's turns (the gateway itself serves attempts,
    # which carry no harness code)
    ("gateway/__init__.py", frozenset({"site"})),
    ("gateway/conversation.py", frozenset({"site"})),
    ("gateway/turns.py", frozenset({"site"})),
    ("*", frozenset()),  # the CLI (recon/commands/, cli.py), py.typed, metric cards...
]


def expected(rel: str) -> frozenset[str]:
    return next(kinds for pattern, kinds in TABLE if fnmatch.fnmatch(rel, pattern))


def files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.relative_to(root).parts
    )


STAT = StatCache(None)
"""One in-memory stat cache: an edit re-hashes the edited file only."""


def digests(package: Path, graph: CodeGraph, chromium: str = "Chromium 1.0") -> dict[str, str]:
    codes = Codes(STAT, package=package, tools=lambda: {"chromium": chromium})
    codes.__dict__["graph"] = graph  # a comment edit changes no import: reuse the parse
    return {kind: codes.digest(kind) for kind in KIND_MODULES}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("pkg") / "recon"
    shutil.copytree(PACKAGE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    for path in files(dest):  # not racily clean: the stat cache may trust them
        os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    return dest


def test_every_file_re_keys_exactly_the_kinds_of_the_table(package: Path) -> None:
    graph = CodeGraph(package)
    base = digests(package, graph)
    wrong = {}
    for path in files(package):
        rel = path.relative_to(package).as_posix()
        original = path.read_bytes()
        edit = b"\n# a trivial edit\n" if path.suffix == ".py" else b"\n"
        path.write_bytes(original + edit)
        try:
            moved = {k for k, d in digests(package, graph).items() if d != base[k]}
        finally:
            path.write_bytes(original)
        if moved != expected(rel):
            wrong[rel] = (sorted(moved), sorted(expected(rel)))
    assert wrong == {}, "file: (re-keyed, expected)"


def test_a_grader_edit_never_re_keys_a_render_kind_and_a_capture_writer_edit_does() -> None:
    graph = CodeGraph(PACKAGE)
    codes = Codes(StatCache(None), tools=lambda: {"chromium": "Chromium 1.0"})
    for kind in RENDER:
        closure = graph.closure(KIND_MODULES[kind])
        assert not [m for m in closure if m.startswith("recon.grade")], kind
    assert "pipeline/kinds/render.py" in codes.code("capture").modules
    assert "render/fonts/LiberationSans-Regular.ttf" in codes.code("capture").data
    assert "model/grading.py" in codes.code("grade").modules  # the Thresholds defaults
    assert codes.code("attempt").modules == {} and codes.code("attempt").toolchain == {}


def test_a_chromium_version_re_keys_the_render_kinds_only(package: Path) -> None:
    graph = CodeGraph(package)
    before = digests(package, graph, "Chromium 156.0.8078.73")
    after = digests(package, graph, "Chromium 157.0.8101.12")
    assert {k for k in before if before[k] != after[k]} == RENDER
    codes = Codes(StatCache(None), package=package, tools=lambda: {"chromium": "Chromium 157"})
    assert codes.toolchain()["chromium"] == "Chromium 157"
    assert "chromium" not in codes.code("grade").toolchain


def test_a_numeric_library_version_re_keys_the_kinds_that_import_it(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = CodeGraph(package)
    before = digests(package, graph)
    real = codegraph._version

    def bumped(dist: str) -> str:
        return "99.0" if dist == "numpy" else real(dist)

    monkeypatch.setattr(codegraph, "_version", bumped)
    after = digests(package, graph)
    # the site draws its heatmaps with numpy (and pillow)
    assert {k for k in before if before[k] != after[k]} == {"grade", "aggregate", "site"}
    assert after != before


def test_python_is_in_every_code_kind_and_no_kind_lacks_its_own_module() -> None:
    codes = Codes(StatCache(None), tools=lambda: {"chromium": "Chromium 1.0"})
    for kind in CODE_KINDS:
        code = codes.code(kind)
        assert code.toolchain["python"].startswith("CPython") or code.toolchain["python"]
        module = KIND_MODULES[kind].removeprefix("recon.").replace(".", "/") + ".py"
        assert module in code.modules, kind


def test_an_unresolvable_import_is_an_error_not_a_guess(tmp_path: Path) -> None:
    pkg = tmp_path / "recon"
    (pkg / "lazy").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "lazy" / "__init__.py").write_text("def __getattr__(name): ...\n")
    (pkg / "user.py").write_text("from recon.lazy import Hidden\n")
    with pytest.raises(Exception, match="resolves to nothing"):
        CodeGraph(pkg).closure("recon.user")
    (pkg / "lazy" / "__init__.py").write_text('_EXPORTS = {"Hidden": "recon.lazy.hid"}\n')
    (pkg / "lazy" / "hid.py").write_text("class Hidden: ...\n")
    assert "recon.lazy.hid" in CodeGraph(pkg).closure("recon.user")


def test_type_checking_imports_are_not_code(tmp_path: Path) -> None:
    pkg = tmp_path / "recon"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "heavy.py").write_text("X = 1\n")
    (pkg / "light.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from recon.heavy import X\n"
        "def f():\n    from recon import heavy\n"
    )
    assert CodeGraph(pkg).closure("recon.light") == ["recon", "recon.heavy", "recon.light"]
    (pkg / "light.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from recon.heavy import X\n"
    )
    assert CodeGraph(pkg).closure("recon.light") == ["recon", "recon.light"]


def test_the_module_facts_cache_gives_the_same_digests_and_never_outlives_an_edit(
    package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = tmp_path / "codegraph.json"
    base = digests(package, CodeGraph(package))
    assert digests(package, CodeGraph(package, facts)) == base  # cold: written
    parsed: list[str] = []
    read = codegraph._read_module

    def counted(name: str, path: Path, source: bytes) -> codegraph.Module:
        parsed.append(name)
        return read(name, path, source)

    monkeypatch.setattr(codegraph, "_read_module", counted)
    warm = CodeGraph(package, facts)
    assert digests(package, warm) == base  # warm: read, nothing parsed
    assert parsed == []
    assert "recon.sandbox.engine" not in warm.closure("recon.pipeline.kinds.grade")

    path = package / "pipeline" / "kinds" / "grade.py"
    original = path.read_bytes()
    path.write_bytes(original + b"\nfrom recon.sandbox import engine as _engine\n")
    parsed.clear()
    try:
        warm = CodeGraph(package, facts)
        assert parsed == ["recon.pipeline.kinds.grade"]  # the edited module alone
        assert "recon.sandbox.engine" in warm.closure("recon.pipeline.kinds.grade")
        assert warm.closure("recon.pipeline.kinds.grade") == CodeGraph(package).closure(
            "recon.pipeline.kinds.grade"
        )
    finally:
        path.write_bytes(original)
    assert "recon.sandbox.engine" not in CodeGraph(package, facts).closure(
        "recon.pipeline.kinds.grade"
    )


def test_a_damaged_or_foreign_facts_file_is_read_as_empty(tmp_path: Path) -> None:
    pkg = tmp_path / "recon"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text(
        '_EXPORTS = {"T": "recon.sub.t"}\nTOOL_FACTS = ("x",)\n'
    )
    (pkg / "sub" / "t.py").write_text("import numpy\nT = 'table.csv'\n")
    (pkg / "top.py").write_text("from recon.sub import T\ndef f():\n    from recon import sub\n")
    facts = tmp_path / "codegraph.json"

    def read(graph: CodeGraph) -> tuple[dict[str, codegraph.Module], dict[str, str]]:
        return graph.modules, graph.toolchain(sorted(graph.modules), {"x": "1"})

    base = read(CodeGraph(pkg))
    assert base[1]["numpy"] != "not installed"
    assert read(CodeGraph(pkg, facts)) == base
    good = json.loads(facts.read_bytes())
    assert good["distributions"]["numpy"] == ["numpy"]
    rows = {**good, "modules": {key: {"imports": 7} for key in good["modules"]}}
    dists = {**good, "distributions": {"numpy": 7}}
    foreign = {**good, "reader": "3.0 elsewhere"}
    for damage in [b"not json", b"[]", *(json.dumps(d).encode() for d in (rows, dists, foreign))]:
        facts.write_bytes(damage)
        assert read(CodeGraph(pkg, facts)) == base, damage
        assert json.loads(facts.read_bytes()) == good, damage  # written whole again
