"""A store that heals itself, and a release published atomically (issue 9).

Every corruption is made on a copy of the built demo and healed by one rebuild: exit 0,
no traceback, and the manifest byte-identical to a clean build's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from recon.errors import StoreError
from recon.pipeline.tasks import Pipeline
from recon.project.loader import Project
from recon.project.settings import Settings
from recon.site.images import image_name
from recon.store import Store, put_files, tree_files
from tests.conftest import Build, clone_built, copy_project, doit, recon

pytestmark = [pytest.mark.slow, pytest.mark.browser]

FAITHFUL = "demo-native.scripted-faithful.html5-boilerplate.0"
STARTER = "demo-native.scripted-starter.html5-boilerplate.0"


def pointer(project: Path, kind: str, name: str) -> dict:  # type: ignore[type-arg]
    return json.loads((project / "store/cells" / kind / f"{name}.json").read_text())


def output(project: Path, kind: str, name: str, out: str) -> str:
    return str(pointer(project, kind, name)["outputs"][out]["digest"])


def overwrite(project: Path, digest: str, data: bytes) -> None:
    path = Store(project / "store").path(digest)
    path.chmod(0o644)
    path.write_bytes(data)


def capture_png(project: Path, name: str) -> str:
    store = Store(project / "store")
    files = tree_files(store, output(project, "capture", name, "captures"))
    return files["root.desktop.default/full.png"].digest


def manifest(project: Path) -> bytes:
    return (project / "releases/demo/manifest.json").read_bytes()


def clean_log(build: Build) -> None:
    assert build.code == 0, build.stdout + build.stderr
    assert "Traceback" not in build.stdout + build.stderr


@pytest.fixture
def demo(built_demo: tuple[Path, Build], tmp_path: Path) -> Path:
    return clone_built(built_demo[0], tmp_path / "p")


def test_two_cold_builds_give_byte_identical_manifests(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    """The fixture built with two worker threads; this one with one."""
    again = copy_project(tmp_path / "again")
    doit(again, "release:demo")
    assert manifest(again) == manifest(built_demo[0])
    assert (again / "releases/demo/release.json").read_bytes() == (
        built_demo[0] / "releases/demo/release.json"
    ).read_bytes()
    runs = json.loads((again / "releases/demo/runs.json").read_text())
    assert len(runs["attempts"]) == len(
        [c for c in json.loads(manifest(again))["cells"] if c["kind"] == "attempt"]
    )


def test_a_flipped_byte_in_a_grade_is_healed_when_aggregate_reads_it(
    demo: Path, tmp_path: Path
) -> None:
    clean = clone_built(demo, tmp_path / "clean")
    for project in (demo, clean):  # any aggregate code edit makes aggregate read the grades
        code = project / "recon/release/aggregate.py"
        code.write_text(code.read_text() + "\n# re-key the aggregate cell\n")
    grade = output(demo, "grade", STARTER, "grade")
    blob = Store(demo / "store").path(grade).read_bytes()
    assert b'"total":0.241' in blob
    overwrite(demo, grade, blob.replace(b'"total":0.241', b'"total":0.941'))
    healed = doit(demo, "release:demo", check=False)
    clean_log(healed)
    assert f"healed aggregate:demo: object {grade[:12]} corrupt" in healed.stderr
    assert f"grade:{STARTER}" in healed.ran
    doit(clean, "release:demo")
    assert manifest(demo) == manifest(clean)
    release = json.loads((demo / "releases/demo/release.json").read_text())
    starter = next(e for e in release["entries"] if e["entry"] == "scripted-starter")
    assert round(starter["cases"][0]["mean"], 3) == 0.241
    assert (demo / "store/quarantine").is_dir()


def test_a_truncated_capture_is_re_rendered_before_the_site_ships_it(demo: Path) -> None:
    before = manifest(demo)
    png = capture_png(demo, FAITHFUL)
    data = Store(demo / "store").path(png).read_bytes()
    overwrite(demo, png, data[: len(data) // 2])
    shutil.rmtree(demo / "releases/demo")
    healed = doit(demo, "release:demo", check=False)
    clean_log(healed)
    assert f"capture:{FAITHFUL}" in healed.ran and "site:demo" in healed.ran
    assert manifest(demo) == before
    shipped = (demo / "releases/demo/site" / image_name(data)).read_bytes()
    assert shipped == data
    assert recon(demo, "store", "verify").returncode == 0


def test_a_deleted_object_the_site_needs_is_made_again(demo: Path) -> None:
    before = manifest(demo)
    site = output(demo, "site", "demo", "site")
    index = tree_files(Store(demo / "store"), site)["index.html"].digest
    Store(demo / "store").path(index).unlink()
    shutil.rmtree(demo / "releases/demo")
    healed = doit(demo, "release:demo", check=False)
    clean_log(healed)
    assert "site:demo" in healed.ran
    assert manifest(demo) == before
    assert (demo / "releases/demo/site/index.html").is_file()


def test_garbage_and_deleted_pointers(demo: Path) -> None:
    before = manifest(demo)
    garbage = demo / f"store/cells/grade/{STARTER}.json"
    garbage.write_bytes(b"\x00\xffnot a pointer{")
    verify = recon(demo, "store", "verify")
    assert verify.returncode == 1 and "Traceback" not in verify.stderr
    assert f"garbage pointer: {garbage}" in verify.stdout
    gc = recon(demo, "store", "gc", "--dry-run")
    assert gc.returncode == 1 and "gc refused" in gc.stderr and "Traceback" not in gc.stderr
    # a deleted pointer whose action record names a corrupt object is not "reused"
    png = capture_png(demo, STARTER)
    overwrite(demo, png, b"\x89PNG not really")
    (demo / f"store/cells/capture/{STARTER}.json").unlink()
    healed = doit(demo, "release:demo", check=False)
    clean_log(healed)
    assert f"capture:{STARTER}" in healed.ran
    assert pointer(demo, "grade", STARTER)["key"]  # readable again
    assert manifest(demo) == before
    assert recon(demo, "store", "verify").returncode == 0


def test_verify_repair_offline_then_one_rebuild(demo: Path) -> None:
    before = manifest(demo)
    grade = output(demo, "grade", FAITHFUL, "grade")
    overwrite(demo, grade, b"{}")
    repair = recon(demo, "store", "verify", "--repair")
    assert repair.returncode == 0, repair.stdout + repair.stderr
    assert "corrupt:" in repair.stdout and "quarantined" in repair.stdout
    assert not (demo / f"store/cells/grade/{FAITHFUL}.json").exists()
    rebuilt = doit(demo, "release:demo", check=False)
    clean_log(rebuilt)
    # both faithful attempts built the same bytes: one grade cell runs, the other reuses it
    assert [c for c in rebuilt.ran if c.startswith(f"grade:{FAITHFUL[:-1]}")]
    assert manifest(demo) == before
    assert recon(demo, "store", "verify").returncode == 0


def test_a_corrupt_attempt_output_re_runs_the_attempt(demo: Path, tmp_path: Path) -> None:
    clean = clone_built(demo, tmp_path / "clean")
    for project in (demo, clean):  # a grader edit: the grade reads the bytes served
        code = project / "recon/grade/compose.py"
        code.write_text(code.read_text() + "\n# re-key the grade cells\n")
    build = output(demo, "attempt", FAITHFUL, "build")
    css = next(
        f.digest
        for path, f in tree_files(Store(demo / "store"), build).items()
        if path.endswith(".css")
    )
    overwrite(demo, css, b"body { color: red }")
    healed = doit(demo, "release:demo", check=False)
    clean_log(healed)
    assert f"attempt:{FAITHFUL}" in healed.ran
    doit(clean, "release:demo")
    assert manifest(demo) == manifest(clean)


def test_a_failed_export_leaves_the_previous_release_intact(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = demo / "releases/demo"
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    monkeypatch.chdir(demo)
    monkeypatch.delenv("RECON_STORE", raising=False)
    pipeline = Pipeline(Project.open(demo, Settings.from_env()))

    def broken(*_: object) -> None:
        raise StoreError("disk full while writing the site")

    monkeypatch.setattr("recon.pipeline.publish.checkout_tree", broken)
    failed = pipeline._export("demo", pipeline.roots["demo"])
    assert failed is not None and "disk full" in str(failed)
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before
    assert [p.name for p in (demo / "releases").iterdir() if p.name.startswith(".")] == []
    pipeline.rt.close()


def test_recon_check_passes_clean_and_names_a_swapped_capture(demo: Path) -> None:
    clean = recon(demo, "check", "demo", "--sample", "3")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "different" not in clean.stdout and clean.stdout.count("  same ") >= 9 * 2
    # swap a sampled capture's recorded output for a different valid PNG
    store = Store(demo / "store")
    shot = "root.desktop.default/full.png"
    for seed in range(20):  # the first seed that samples a capture with a desktop still
        args = ("check", "demo", "--kind", "capture", "--sample", "1", "--seed", str(seed))
        sampled = recon(demo, *args)
        [name] = [line.split()[1] for line in sampled.stdout.splitlines() if " same " in line]
        cell = name.split(":", 1)[1]
        if pointer(demo, "capture", cell)["outputs"]["captures"]["type"] == "tree":
            break
    captures = output(demo, "capture", cell, "captures")
    files = {p: store.read_bytes(f.digest) for p, f in tree_files(store, captures).items()}
    others = (store.read_bytes(capture_png(demo, c)) for c in (FAITHFUL, STARTER))
    files[shot] = next(png for png in others if png != files[shot])
    swapped = put_files(store, files)
    data = pointer(demo, "capture", cell)
    data["outputs"]["captures"]["digest"] = swapped
    (demo / f"store/cells/capture/{cell}.json").write_text(json.dumps(data))
    record_path = demo / "store/actions" / data["key"][:2] / f"{data['key']}.json"
    record = json.loads(record_path.read_text())
    record["outputs"]["captures"]["digest"] = swapped
    record_path.chmod(0o644)
    record_path.write_text(json.dumps(record))
    failed = recon(demo, *args)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert f"different {name}" in failed.stdout
    assert "differs: captures/root.desktop.default/full.png" in failed.stdout
