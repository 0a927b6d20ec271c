"""The gateway on the site (issue 24): a gateway attempt's trace counts on its run page are
the recording's, the agent's own report beside them where it differs; its transcript page
shows each turn's text, tool calls and results in order, escaped and bounded, without a
timing; a spent model budget says why the attempt is excluded. Recordings are built in
memory: no container."""

from __future__ import annotations

import html as markup
import re
from typing import Any

from recon.model import AttemptRecord, Runs, RunTrace, Trace
from recon.model.gateway import Exchange, GatewayOutcome, Recording, Usage
from recon.model.result import AttemptSummary
from recon.pipeline.kinds.attempt import _model_use
from recon.pipeline.publish import run_traces
from recon.release.aggregate import agent_report
from recon.site import build_site
from recon.site.transcript import BODY_CHARS, PAGE_CHARS, transcript
from tests.site.test_export import attempt, case, digest, entry, html_files, release

HOSTILE = '<script>alert("pwn")</script>'
RESULT = "index.html\n<img src=x onerror=alert(1)>"
PRICES = digest("prices")


def exchange(turn: int, protocol: Any, request: Any, message: Any, **over: Any) -> Exchange:
    fields: dict[str, Any] = {
        "turn": turn, "protocol": protocol, "endpoint": "generate", "model": "m-1",
        "stream": False, "path": "/v1/x", "request_headers": {"x-seen": "header-9f3"},
        "request": request, "status": 200, "response_headers": {}, "message": message,
        "usage": Usage(input=100 * turn, output=10 * turn, cache_read=turn, reasoning=2),
        "cost_usd": 0.001 * turn, "started_s": 12.3456 + turn, "total_ms": 987.654 + turn,
    }  # fmt: skip
    return Exchange(**(fields | over))


def recording(*, outcome: GatewayOutcome | None = None, long: str = "") -> Recording:
    first = exchange(
        1, "anthropic",
        {"messages": [{"role": "user", "content": f"Rebuild the page. {long}"}]},
        {"content": [{"type": "text", "text": f"Looking first. {HOSTILE}"},
                     {"type": "tool_use", "id": "tu_1", "name": "bash", "input": {"cmd": "ls"}}]},
    )  # fmt: skip
    second = exchange(
        2, "chat",
        {"messages": [
            {"role": "user", "content": "Rebuild the page."},
            {"role": "assistant", "content": "Looking first.", "tool_calls": [
                {"id": "tu_1", "function": {"name": "bash", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "tu_1", "content": RESULT},
        ]},
        {"choices": [{"message": {"role": "assistant", "content": "Done: built it."}}]},
        stream=True,
    )  # fmt: skip
    exchanges = [first, second]
    if outcome is not None:
        refused = {"status": 400, "usage": None, "cost_usd": None, "refused": outcome.reason}
        exchanges.append(exchange(3, "chat", {"messages": []}, None, **refused))
    usage = Usage()
    for e in exchanges:
        usage = usage + (e.usage or Usage())
    return Recording(upstream="scripted", prices_digest=PRICES, exchanges=exchanges,
                     usage=usage, cost_usd=0.003, outcome=outcome)  # fmt: skip


def gateway_attempt(made: Recording, own: Trace, **over: Any) -> AttemptSummary:
    use = _model_use(made)
    return attempt("gw-home-0", "alpha", "home", model_use=use, trace=use.trace(),
                   agent_trace=own, **over)  # fmt: skip


def site(made: Recording, summary: AttemptSummary) -> dict[str, bytes]:
    result = release([summary], [entry("alpha", 1, 0.75)])
    return build_site(result, {"home": case({})}, {}, {}, {summary.id: transcript(made)})


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", markup.unescape(re.sub(r"<[^>]+>", " ", html)))


def test_the_record_counts_come_from_the_recording() -> None:
    use = _model_use(recording(outcome=GatewayOutcome(kind="budget", reason="spent")))
    assert (use.calls, use.turns, use.tool_calls) == (2, 2, 1)  # the refused call is none
    assert use.tokens == 100 + 10 + 1 + 200 + 20 + 2 and use.prices == PRICES
    assert use.trace() == Trace(turns=2, tool_calls=1, tokens=use.tokens)


def test_the_agents_report_is_kept_wherever_it_made_one() -> None:
    made = recording()
    use = _model_use(made)
    base: dict[str, Any] = {"entry": "e", "case": "c", "index": 0, "protocol": "p",
                            "backend": "docker", "formal": True, "outcome": "valid",
                            "reason": "ok", "image": digest("image"), "model_use": use}  # fmt: skip
    agrees = AttemptRecord(**base, trace=Trace(turns=2, tokens=None))  # shown, though equal
    assert agent_report(agrees) == Trace(turns=2)
    differs = AttemptRecord(**base, trace=Trace(turns=2, tokens=5, cost_usd=0.5))
    assert agent_report(differs) == Trace(turns=2, tokens=5, cost_usd=0.5)
    silent = AttemptRecord(**base, trace=Trace())  # a scripted agent reports nothing
    assert agent_report(silent) is None
    no_gateway = AttemptRecord(**(base | {"model_use": None}), trace=Trace(turns=9))
    assert agent_report(no_gateway) is None
    # an unknown cost is left out of the JSON: the lines of agents without one are unchanged
    assert "cost_usd" not in agrees.trace.model_dump_json()
    assert "cost_usd" in differs.trace.model_dump_json()


def test_the_run_page_shows_the_gateways_counts_and_the_agents_beside_them() -> None:
    made = recording()
    use = _model_use(made)
    own = Trace(turns=7, tool_calls=None, tokens=41, cost_usd=0.0125)
    files = site(made, gateway_attempt(made, own))
    page = text_of(files["runs/gw-home-0.html"].decode())
    assert "gateway agent's own report" in page
    assert "cost (USD, pinned prices) $0.003000 $0.012500 " in page
    assert f"turns {use.turns:,} 7 " in page
    assert f"tool calls {use.tool_calls:,} not reported " in page
    assert f"tokens {use.tokens:,} 41 " in page
    assert f"model calls {use.calls:,} " in page
    for label, kind in (("input", "input"), ("output", "output"), ("cache read", "cache_read"),
                        ("cache write", "cache_write")):  # fmt: skip
        assert f"{label} tokens {getattr(made.usage, kind):,} " in page
    assert f"reasoning tokens (part of output) {made.usage.reasoning:,} " in page
    assert "cost (USD, pinned prices) $0.003000 " in page and PRICES in page
    assert 'href="../transcripts/gw-home-0.html"' in files["runs/gw-home-0.html"].decode()


def test_an_agreeing_report_is_shown_and_no_report_shows_one_column() -> None:
    made = recording()
    use = _model_use(made)
    agrees = Trace(turns=use.turns, tool_calls=use.tool_calls, tokens=use.tokens)
    html = site(made, gateway_attempt(made, agrees))["runs/gw-home-0.html"].decode()
    assert "gateway agent's own report" in text_of(html) and ' differs"' not in html
    assert f"turns {use.turns:,} {use.turns:,} " in text_of(html)
    assert "cost (USD, pinned prices) $0.003000 not reported " in text_of(html)
    files = site(made, gateway_attempt(made, None))  # type: ignore[arg-type]
    page = text_of(files["runs/gw-home-0.html"].decode())
    assert "the agent made no report of its own" in page
    assert "agent's own report </th>" not in files["runs/gw-home-0.html"].decode()


def test_the_transcript_shows_text_calls_and_results_in_order() -> None:
    made = recording()
    html = site(made, gateway_attempt(made, Trace()))["transcripts/gw-home-0.html"].decode()
    page = text_of(html)
    order = ["Turn 1", "Rebuild the page.", "Looking first.", "bash", '{"cmd": "ls"}',
             "index.html", "Turn 2", "chat · generate · streamed", "Done: built it."]  # fmt: skip
    at = [page.index(part) for part in order]
    assert at == sorted(at), list(zip(order, at, strict=True))
    assert "input 100, output 10, cache read 1, cache write 0, reasoning 2" in page
    assert "cost $0.001000" in page and "cost $0.002000" in page
    assert "served every call" in page


def test_hostile_model_text_and_results_render_as_text() -> None:
    made = recording()
    files = site(made, gateway_attempt(made, Trace()))
    html = files["transcripts/gw-home-0.html"].decode()
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&#34;pwn&#34;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert not re.findall(r"<script[^>]*>", html)  # the transcript loads no script


def test_no_timing_and_no_header_reaches_the_site() -> None:
    made = recording()
    files = site(made, gateway_attempt(made, Trace()))
    for path, html in html_files(files).items():
        for leaked in ("header-9f3", "13.3456", "988.654", "987.654", "/v1/x"):
            assert leaked not in html, (path, leaked)
    timings = {"started_s", "total_ms", "first_byte_ms", "tries", "request_headers"}
    assert not timings & set(transcript(made).turns[0].model_dump())


def test_a_spent_budget_is_shown_on_the_run_page_and_the_transcript() -> None:
    spent = "token budget spent: 332 of 300 tokens"
    made = recording(outcome=GatewayOutcome(kind="budget", reason=spent))
    summary = gateway_attempt(made, Trace(), outcome="timeout", reason=f"model budget: {spent}",
                              total=None, dimensions={}, checks=[])  # fmt: skip
    files = site(made, summary)
    run = text_of(files["runs/gw-home-0.html"].decode())
    said = "Excluded: the model gateway stopped this attempt when its model budget was spent"
    assert f"{said} ({spent})" in run
    assert "kept, final, not retried, and excluded" in run
    page = text_of(files["transcripts/gw-home-0.html"].decode())
    assert f"budget spent : {spent}" in page
    assert f"Refused by the gateway: {spent}" in page


def test_a_time_limit_is_no_budget() -> None:
    made = recording()
    summary = gateway_attempt(made, Trace(), outcome="timeout", reason="time limit 300 s",
                              total=None, dimensions={}, checks=[])  # fmt: skip
    assert "Excluded: the model gateway" not in site(made, summary)["runs/gw-home-0.html"].decode()


def test_long_bodies_are_cut_with_a_note_and_the_page_is_bounded() -> None:
    long = "y" * (3 * BODY_CHARS)
    made = recording(long=long)
    html = site(made, gateway_attempt(made, Trace()))["transcripts/gw-home-0.html"].decode()
    assert long not in html and "y" * (BODY_CHARS - 30) in html
    assert (
        f"the first {BODY_CHARS:,} of {len('Rebuild the page. ') + len(long):,} characters" in html
    )
    many = recording()
    many.exchanges[:] = [many.exchanges[0]] * (PAGE_CHARS // 40)
    made = transcript(many.model_copy(update={"exchanges": many.exchanges}))
    assert made.turns_left_out > 0
    shown = sum(len(t.sent.text) + len(t.text.text) for t in made.turns)
    assert shown <= PAGE_CHARS + 2 * BODY_CHARS


def test_two_builds_are_byte_identical() -> None:
    made = recording()
    summary = gateway_attempt(made, Trace(turns=7))
    again = Recording.model_validate(made.model_dump(mode="json"))
    assert site(made, summary) == site(again, summary)
    later = {"started_s": 99.0, "total_ms": 5.0, "first_byte_ms": 1.0}
    slower = again.model_copy(
        update={"exchanges": [e.model_copy(update=later) for e in again.exchanges]}
    )
    assert transcript(slower) == transcript(made)  # timings are not in it


def test_runs_json_has_the_trace_counts_the_release_json_publishes() -> None:
    made = recording()
    use = _model_use(made)
    own = Trace(turns=7, tokens=41)
    plain = attempt("plain-home-0", "alpha", "home")
    result = release([gateway_attempt(made, own), plain], [entry("alpha", 1, 0.75)])
    traces = run_traces(result)
    assert traces["gw-home-0"] == RunTrace(source="gateway", counts=use.trace(), agent=own)
    assert traces["plain-home-0"] == RunTrace(source="agent", counts=plain.trace)
    old = {"schema_version": 2, "release": "r", "attempts": {}, "wall_s": {}}
    assert Runs.model_validate(old).traces == {}  # a runs.json of before: no counts
