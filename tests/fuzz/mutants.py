"""The ways the corpus breaks real files, one generator per class of defect.

Each yields ``(name, target key, file key, names, data)``: the mutant's name, which real
file it replaces, which file the error must name (a ``TARGETS`` key or a path), what the
error line must contain, and the bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.fuzz.generate import Source

Made = Iterator[tuple[str, str, str, tuple[str, ...], bytes]]
ONE_MIB = 1024 * 1024


def _set(path: str, value: Any) -> Callable[[Any], None]:
    """A change that sets ``a.b[0].c`` to ``value`` (creating mappings as needed)."""

    def change(data: Any) -> None:
        *parents, last = _parts(path)
        node = data
        for part in parents:
            node = node.setdefault(part, {}) if isinstance(part, str) else node[part]
        node[last] = value

    return change


def _parts(path: str) -> list[str | int]:
    out: list[str | int] = []
    for chunk in path.replace("]", "").split("."):
        name, *indexes = chunk.split("[")
        if name:
            out.append(name)
        out.extend(int(i) for i in indexes)
    return out


def _field(s: Source, name: str, key: str, path: str, value: Any, *names: str) -> Made:
    yield name, key, key, names or (path,), s.edit(key, _set(path, value))


def _changed(s: Source, name: str, key: str, change: Callable[[Any], object], *names: str) -> Made:
    """The file ``key`` changed by ``change``; its error names ``names``."""
    yield name, key, key, names, s.edit(key, change)


# --- the file itself -------------------------------------------------------------------


def encodings(s: Source) -> Made:
    garbage = bytes(range(256)) * 4
    for key in ("case", "contract", "grading", "entry", "release"):
        yield f"binary-{key}", key, key, ("binary file",), garbage
    yield (
        "latin-1",
        "case",
        "case",
        ("not UTF-8",),
        s.text("case").replace("HTML5", "HTML5 \u00e9t\u00e9").encode("latin-1"),
    )
    yield "nul-byte", "entry", "entry", ("NUL byte",), s.text("entry").encode() + b"\0\n"
    yield "utf-16", "release", "release", ("binary file",), s.text("release").encode("utf-16")
    yield "control-char", "case", "case", ("malformed YAML",), b"title: \x07bell\n"


def yaml_files(s: Source) -> Made:
    yield (
        "unclosed-bracket",
        "contract",
        "contract",
        ("malformed YAML", "line"),
        (s.text("contract").replace('routes: ["/"]', 'routes: ["/"').encode()),
    )
    yield (
        "tab-indent",
        "entry",
        "entry",
        ("malformed YAML", "line"),
        (s.text("entry").replace("\n  version:", "\n\tversion:").encode()),
    )
    yield "top-level-list", "release", "release", ("expected a mapping",), b"- demo\n- two\n"
    yield "empty", "case", "case", ("expected a mapping",), b""
    yield "scalar", "grading", "grading", ("expected a mapping",), b"just a string\n"
    yield "unhashable-key", "case", "case", ("malformed YAML",), b"? [a, b]\n: x\n"


def duplicate_keys(s: Source) -> Made:
    cases = [
        ("case-id", "case", "id: html5-boilerplate\n", "id: html5-boilerplate\nid: other\n"),
        ("release-protocol", "release", "aggregation:", "protocol: {name: x}\naggregation:"),
        ("grading-weight", "grading", "  policy: 0.1\n", "  policy: 0.1\n  policy: 0.9\n"),
        ("contract-routes", "contract", "test_ids: []\n", "test_ids: []\nroutes: ['/x']\n"),
        ("entry-budget", "entry", "reasoning_effort:", "budget: {cpus: 64}\nreasoning_effort:"),
        ("nested-agent", "entry", '  version: "1"\n', '  version: "1"\n  version: "2"\n'),
        ("set-env-twice", "docker-entry", "  set_env:\n", "  set_env:\n    MSWEA_CONFIGURED: x\n"),
    ]
    for name, key, old, new in cases:
        text = s.text(key)
        assert old in text, (key, old)
        yield name, key, key, ("duplicate key",), text.replace(old, new, 1).encode()


def sizes(s: Source) -> Made:
    for key in ("grading",):  # one is enough to check in; tests/model has a 50 MB one
        text = s.text(key).encode()
        pad = ONE_MIB + 1 - len(text)
        yield f"over-1-mib-{key}", key, key, ("MiB limit",), text + b"#" * (pad - 1) + b"\n"


def aliases(s: Source) -> Made:
    lol = ",".join(['"lol"'] * 9)
    levels = [f"a: &a [{lol}]"]
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        levels.append(f"{name}: &{name} [{','.join([f'*{prev}'] * 9)}]")
    yield "billion-laughs", "grading", "grading", ("aliases",), ("\n".join(levels) + "\n").encode()
    many = "".join(f"k{i}: *x\n" for i in range(17))
    yield "seventeen", "case", "case", ("aliases",), f"x: &x 1\n{many}".encode()
    big = "a: &big [" + ", ".join(["x"] * 2000) + "]\nb: [" + ", ".join(["*big"] * 8) + "]\n"
    yield "repeated-2000x8", "release", "release", ("repeat more than",), big.encode()
    yield "cycle", "entry", "entry", ("cycle",), b"a: &a [1, *a]\n"
    for depth, names in ((100, ("nested more than 64",)), (5000, ("nest",))):
        deep = b"routes: " + b"[" * depth + b"]" * depth + b"\n"
        yield f"deep-nesting-{depth}", "contract", "contract", names, deep


# --- values ----------------------------------------------------------------------------

BAD_ROUTES = [
    ("dotdot", "/.."),
    ("dotdot-inside", "/a/../b"),
    ("dot", "/./a"),
    ("nul", "/a\0b"),
    ("newline", "/a\nb"),
    ("other-host", "//evil.example/"),
    ("query", "/?q=1"),
    ("fragment", "/#top"),
    ("long-5000", "/" + "a" * 5000),
    ("no-slash", "about"),
    ("space", "/a b"),
    ("backslash", "/a\\b"),
    ("percent-dotdot", "/%2e%2e/x"),
    ("tilde", "/~user"),
    ("double-slash", "/a//b"),
    ("scheme", "http://evil.example/"),
]


def routes(s: Source) -> Made:
    for name, route in BAD_ROUTES:
        yield from _field(s, f"contract-{name}", "contract", "routes[0]", route)
    yield from _field(s, "state-dotdot", "contract", "states[0].route", "/../x")
    yield from _field(s, "state-host", "contract", "states[0].route", "//evil.example")
    yield from _field(s, "workflow-dotdot", "grading", "workflows[0].route", "/../admin")
    yield from _field(s, "workflow-query", "grading", "workflows[0].route", "/?admin=1")
    yield from _field(s, "workflow-unknown", "grading", "workflows[0].route", "/admin")
    yield from _field(s, "state-unknown", "contract", "states[0].route", "/admin")

    def navigate(route: str) -> Callable[[Any], None]:
        def change(data: Any) -> None:
            cp = data["workflows"][0]["steps"][7]
            cp.update(preserve="navigate", navigate_to=route)

        return change

    yield from _changed(
        s, "navigate-host", "grading", navigate("//evil.example/x"), "workflows[0].steps[7]"
    )
    yield from _changed(
        s,
        "navigate-unknown",
        "grading",
        navigate("/elsewhere"),
        "workflows[0].steps[7].navigate_to",
    )

    def goto(route: str) -> Callable[[Any], None]:
        def change(data: Any) -> None:
            data["workflows"][1]["steps"].insert(0, {"goto": route})

        return change

    yield from _changed(
        s, "goto-url", "grading", goto("http://evil.example/"), "workflows[1].steps[0]"
    )
    yield from _changed(
        s, "goto-unknown", "grading", goto("/nowhere"), "workflows[1].steps[0].goto"
    )
    yield from _changed(
        s, "point-collision", "contract", _set("routes", ["/", "/root"]), "same matrix point"
    )


def build_outputs(s: Source) -> Made:
    for name, value in [
        ("dot", "."),
        ("dotdot", ".."),
        ("absolute", "/tmp/out"),
        ("escape", "site/../.."),
        ("dot-prefix", "./site"),
        ("empty", ""),
        ("double-slash", "site//x"),
        ("trailing-slash", "site/"),
        ("backslash", "..\\site"),
    ]:
        yield from _field(s, name, "contract", "build.output", value)


def floats(s: Source) -> Made:
    nan, inf = float("nan"), float("inf")
    for name, path, value in [
        ("weight-nan", "weights.policy", nan),
        ("weight-inf", "weights.global_visual", inf),
        ("weight-negative", "weights.policy", -0.1),
        ("weight-over-one", "weights.global_visual", 1.25),
        ("weights-sum-0.9", "weights.policy", 0.0),
        ("assertion-weight-1e308", "assertions[0].weight", 1e308),
        ("assertion-weight-inf", "assertions[0].weight", inf),
        ("assertion-weight-nan", "assertions[0].weight", nan),
        ("assertion-weight-zero", "assertions[0].weight", 0),
        ("region-weight-nan", "regions[0].weight", nan),
        ("region-weight-negative", "regions[0].weight", -2.0),
        ("workflow-weight-1e308", "workflows[0].weight", 1e308),
        ("penalty-minus-50", "policy.penalty", {"disallowed_host": -50}),
        ("penalty-two", "policy.penalty", {"remote_hotlink": 2.0}),
        ("default-penalty-nan", "policy.default_penalty", nan),
        ("text-similarity-1.5", "thresholds.text_similarity", 1.5),
    ]:
        names = ("weights",) if name == "weights-sum-0.9" else (path.split(".")[0],)
        yield from _field(s, name, "grading", path, value, *names)
    yield (
        "assertion-weight-1e308-text",
        "grading",
        "grading",
        ("assertions[0].weight",),
        (
            s.text("grading")
            .replace(
                "    expect: visible\n  - id: title-colour",
                "    weight: 1e308\n    expect: visible\n  - id: title-colour",
                1,
            )
            .encode()
        ),
    )
    yield from _field(s, "cpus-nan", "entry", "budget.cpus", nan)
    yield from _field(s, "cpus-inf", "entry", "budget.cpus", inf)


def ranges(s: Source) -> Made:
    for name, path, value in [
        ("memory-1tb", "budget.memory_mb", 10**9),
        ("pids-1e9", "budget.pids", 10**9),
        ("wall-1e9", "budget.wall_s", 10**9),
        ("disk-1e9", "budget.disk_mb", 10**9),
        ("output-1e9", "budget.output_mb", 10**9),
        ("cpus-1e9", "budget.cpus", 1e9),
        ("memory-1", "budget.memory_mb", 1),
        ("wall-zero", "budget.wall_s", 0),
    ]:
        yield from _field(s, name, "entry", path, value)
    for name, path, value in [
        ("time-limit-1e9", "protocol.time_limit_s", 10**9),
        ("repeats-1e6", "protocol.repeats", 10**6),
        ("retry-1000", "protocol.retry.harness_failure", 1000),
        ("retry-negative", "protocol.retry.harness_failure", -1),
    ]:
        yield from _field(s, name, "release", path, value)
    yield from _field(s, "case-version-1e12", "case", "version", 10**12)
    yield from _field(s, "scroll-1e9", "contract", "states[0].steps[0]", {"scroll": {"y": 10**9}})
    yield from _field(
        s, "position-tolerance-1e9", "grading", "thresholds.position_tolerance_px", 10**9
    )
    yield from _field(s, "max-asset-1e15", "grading", "policy.max_asset_bytes", 10**15)
    yield from _field(s, "hash-distance-1000", "grading", "policy.evidence_hash_distance", 1000)
    yield from _field(
        s, "count-negative", "grading", "assertions[7]", {
            "id": "three-filters", "locator": {"role": "link"}, "expect": "count", "value": -1
        }
    )  # fmt: skip
    yield from _field(
        s, "count-1e9", "grading", "assertions[7]", {
            "id": "three-filters", "locator": {"role": "link"}, "expect": "count", "value": 10**9
        }
    )  # fmt: skip
    yield (
        "int-5000-digits",
        "entry",
        "entry",
        ("too large",),
        (s.text("entry").replace("pids: 64", "pids: " + "9" * 5000).encode()),
    )
    yield from _field(s, "title-10k", "case", "title", "t" * 10_000)
    yield from _field(s, "test-id-200", "contract", "test_ids", ["x" * 200], "test_ids[0]")


def boxes(s: Source) -> Made:
    for name, box in [
        ("huge", [0, 0, 100000, 100000]),
        ("negative-x", [-10, 0, 10, 10]),
        ("negative-y", [0, -5, 10, 10]),
        ("zero-width", [0, 0, 0, 10]),
        ("past-right-edge", [4000, 0, 200, 10]),
        ("past-bottom", [0, 32000, 10, 1000]),
        ("three-numbers", [0, 0, 10]),
        ("strings", ["a", "b", "c", "d"]),
    ]:
        yield (
            name,
            "grading",
            "grading",
            ("regions[0]",),
            s.edit("grading", lambda d, box=box: d["regions"][0].update(box=box, selector=None)),
        )


def viewports(s: Source) -> Made:
    yield from _field(s, "region-unknown", "grading", "regions[0].viewport", "watch")
    yield from _field(s, "workflow-unknown", "grading", "workflows[0].viewport", "huge")
    yield from _field(s, "contract-unknown", "contract", "viewports[1]", "phone")
    yield (
        "region-not-in-contract",
        "contract",
        "grading",
        ("regions[0].viewport",),
        s.edit("contract", _set("viewports", ["mobile", "tablet"])),
    )
    yield from _field(s, "region-viewport-int", "grading", "regions[0].viewport", 1440)


def agent_files(s: Source) -> Made:
    for name, value in [
        ("sealed-grading", "../cases/todomvc/sealed/grading.yaml"),
        ("etc-passwd", "/etc/passwd"),
        ("escape-inside", "scripted/../../cases/todomvc/sealed/grading.yaml"),
        ("empty", ""),
        ("dot-prefix", "./scripted/faithful.py"),
        ("double-slash", "scripted//faithful.py"),
        ("backslash", "..\\..\\etc\\passwd"),
        ("newline", "scripted/faithful.py\n"),
    ]:
        yield from _field(s, name, "entry", "agent.files[0]", value)
    yield from _field(s, "missing", "entry", "agent.files[0]", "scripted/nothing-here.py")
    yield from _changed(
        s,
        "listed-twice",
        "entry",
        lambda d: d["agent"]["files"].append(d["agent"]["files"][0]),
        "agent",
        "listed twice",
    )


def placeholders(s: Source) -> Made:
    for name, part in [
        ("unknown", "{workspacex}"),
        ("attribute", "{workspace.__class__}"),
        ("index", "{workspace[0]}"),
        ("positional", "{0}"),
        ("empty", "{}"),
        ("conversion", "{workspace!r}"),
        ("format-spec", "{workspace:>10}"),
        ("unbalanced-open", "run {workspace"),
        ("unbalanced-close", "run }"),
    ]:
        yield from _field(s, name, "entry", "agent.command[2]", part)
    yield from _field(s, "trace-on-native", "entry", "agent.command[2]", "{trace}", "agent")
    yield from _field(s, "install-unknown", "docker-entry", "agent.install", ["get {secret}"],
                      "agent.install[0]")  # fmt: skip


def envs(s: Source) -> Made:
    for name in (
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "PATH",
        "PYTHONPATH",
        "NODE_OPTIONS",
        "DYLD_INSERT_LIBRARIES",
        "BASH_ENV",
    ):
        yield from _field(s, f"set-{name}", "docker-entry", f"agent.set_env.{name}", "/tmp/x.so")
    yield from _changed(
        s,
        "forward-LD_PRELOAD",
        "docker-entry",
        lambda d: d["agent"]["env"].append("LD_PRELOAD"),
        "agent.env[1]",
    )
    yield from _field(s, "name-with-equals", "docker-entry", "agent.set_env.A=B", "x")
    yield from _field(s, "value-nul", "docker-entry", "agent.set_env.SAFE", "a\0b")


def removed(s: Source) -> Made:
    yield from _field(s, "protocol-egress-junk", "release", "protocol.egress", ["%%junk%%", 7])
    yield from _field(s, "protocol-egress-empty", "release", "protocol.egress", [])
    yield from _field(s, "sandbox-image", "entry", "sandbox.image", "native-host")
    yield from _field(s, "docker-sandbox-image", "docker-entry", "sandbox.image", "recon-sandbox")


def schema(s: Source) -> Made:
    yield from _field(s, "unknown-top-key", "case", "colour", "red")
    yield from _field(s, "unknown-nested-key", "entry", "budget.gpus", 1)
    yield from _changed(s, "missing-id", "case", lambda d: d.pop("id"), "id", "field required")
    yield from _field(s, "repeats-word", "release", "protocol.repeats", "many")
    yield from _field(s, "schema-version-99", "release", "schema_version", 99)
    yield from _field(s, "case-id-mismatch", "case", "id", "other-case", "id")
    yield from _field(s, "unknown-case", "release", "cases[1]", "nope")
    yield from _field(s, "formal-native", "release", "protocol.formal", True, "protocol")
    yield from _field(s, "evidence-condition", "case", "evidence_conditions[0]", "partial")
    yield from _field(s, "step-no-action", "contract", "states[0].steps[0]", {"value": "x"})
    yield from _field(s, "count-without-value", "grading", "assertions[7]", {
        "id": "three-filters", "locator": {"role": "link"}, "expect": "count"
    })  # fmt: skip
    yield from _field(s, "locator-two-kinds", "grading", "assertions[0].locator",
                      {"text": "x", "css": "p"})  # fmt: skip
    yield from _field(s, "duplicate-ids", "grading", "assertions[1].id", "title-visible",
                      "ids must be unique")  # fmt: skip
    yield from _field(s, "entry-id-mismatch", "entry", "id", "someone-else", "id")
    yield from _field(s, "backend-unknown", "entry", "sandbox.backend", "vm")


ALL = {
    "encoding": encodings,
    "yaml": yaml_files,
    "duplicate-key": duplicate_keys,
    "size": sizes,
    "alias": aliases,
    "route": routes,
    "build-output": build_outputs,
    "float": floats,
    "range": ranges,
    "box": boxes,
    "viewport": viewports,
    "agent-files": agent_files,
    "placeholder": placeholders,
    "env": envs,
    "removed-key": removed,
    "schema": schema,
}
