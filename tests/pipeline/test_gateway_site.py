"""The site cell reads each gateway attempt's transcript from its recording (issue 24): one
turn per recorded call, the record's counts equal to the recording's, and no timing in
what enters the site's key, so two cold builds of the same inputs key the site alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.model import Recording
from recon.model.transcript import Transcript
from recon.pipeline.kinds.site import site_extra
from recon.pipeline.runtime import walk
from tests.pipeline.test_gateway_attempt import _build, _project, _record


def _transcripts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict, Recording]:
    project = _project(tmp_path)
    pipeline, pointer = _build(project, monkeypatch)
    (site,) = [c for c in walk([pipeline.roots["gw"]]) if c.kind == "site"]
    digest = site_extra(pipeline.rt, site)["transcripts"]
    made = pipeline.rt.store.read_json(digest)
    recording = Recording.model_validate(
        pipeline.rt.store.read_json(pointer.outputs["gateway"].digest)
    )
    record = _record(pipeline, pointer)
    assert record.model_use is not None
    use = record.model_use
    assert (use.calls, use.turns, use.tool_calls) == (len(recording.exchanges),) * 2 + (0,)
    assert use.prices == recording.prices_digest
    pipeline.rt.close()
    return digest, made, recording


@pytest.mark.docker
def test_the_site_keys_on_the_transcript_not_on_the_recordings_timings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, made, recording = _transcripts(tmp_path / "one", monkeypatch)
    ((name, data),) = made.items()
    assert name == "gw-docker.gateway-scripted.clean-blog.0"
    transcript = Transcript.model_validate(data)
    assert [t.turn for t in transcript.turns] == [e.turn for e in recording.exchanges]
    assert [t.usage for t in transcript.turns] == [e.usage for e in recording.exchanges]
    assert transcript.usage == recording.usage and transcript.outcome is None
    assert transcript.turns[0].sent.text.startswith("# Brief")
    second, _, again = _transcripts(tmp_path / "two", monkeypatch)
    assert [e.total_ms for e in again.exchanges] != [e.total_ms for e in recording.exchanges]
    assert second == first  # a cold rebuild: other timings, the same key input
