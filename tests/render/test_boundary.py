"""The render boundary: chromium in an empty network namespace. A page that tries every way
out reaches nothing on the host, and the capture's network log lists what it tried."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import sync_playwright

from recon.curate.freeze import folder_reader
from recon.errors import HarnessError
from recon.render import Capture, NetworkEvent, Viewport
from recon.render.browser import LAUNCH_ARGS, chromium_path, open_browser
from recon.render.capture import capture
from recon.render.netns import FIX, unshare_prefix
from recon.render.page import load, open_page
from recon.render.serve import build_path
from recon.store import Store, put_tree, tree_reader

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
    ),
]

VIEWPORT = Viewport("small", 640, 480)


@dataclass
class Listener:
    """A TCP and a UDP socket on the host's 127.0.0.1, counting what reaches them."""

    tcp: socket.socket
    udp: socket.socket
    connections: list[tuple[str, int]] = field(default_factory=list)
    packets: list[bytes] = field(default_factory=list)

    @property
    def tcp_port(self) -> int:
        return int(self.tcp.getsockname()[1])

    @property
    def udp_port(self) -> int:
        return int(self.udp.getsockname()[1])

    def accept(self) -> None:
        while True:
            try:
                conn, peer = self.tcp.accept()
            except OSError:
                return
            self.connections.append(peer)
            conn.close()

    def receive(self) -> None:
        while True:
            try:
                self.packets.append(self.udp.recvfrom(4096)[0])
            except OSError:
                return


@pytest.fixture
def listener() -> Iterator[Listener]:
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(64)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    found = Listener(tcp, udp)
    threads = [threading.Thread(target=f, daemon=True) for f in (found.accept, found.receive)]
    for thread in threads:
        thread.start()
    yield found
    for sock in (tcp, udp):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked on it
        sock.close()


def everything(tcp: int, udp: int) -> str:
    """A page that tries every way out it can: WebRTC STUN (UDP) and TURN (TCP), fetch and
    web sockets (from the page and from a worker), a popup, an iframe, an image, a beacon,
    DNS prefetch and preconnect."""
    host = f"127.0.0.1:{tcp}"
    worker = (
        f"fetch('http://{host}/worker-fetch').catch(() => 0);"
        f"try {{ new WebSocket('ws://{host}/worker-ws') }} catch (e) {{}}"
    )
    return f"""<!doctype html><meta charset="utf-8">
<link rel="dns-prefetch" href="//exfil.example"><link rel="preconnect" href="http://{host}">
<p id="tells"></p><iframe src="http://{host}/iframe"></iframe>
<script>
  try {{
    const pc = new RTCPeerConnection({{iceServers: [{{urls: 'stun:127.0.0.1:{udp}'}},
      {{urls: 'turn:{host}?transport=tcp', username: 'u', credential: 'p'}}]}});
    pc.createDataChannel('out');
    pc.createOffer().then((offer) => pc.setLocalDescription(offer));
  }} catch (e) {{ console.error('webrtc: ' + e); }}
  fetch('http://{host}/fetch').catch(() => 0);
  try {{ new WebSocket('ws://{host}/ws'); }} catch (e) {{}}
  window.open('http://{host}/popup');
  navigator.sendBeacon('http://{host}/beacon', 'secret');
  document.body.append(Object.assign(new Image(), {{src: 'http://{host}/img'}}));
  new Worker(URL.createObjectURL(new Blob([{worker!r}], {{type: 'text/javascript'}})));
  document.getElementById('tells').textContent =
    'webdriver=' + navigator.webdriver + ' ua=' + navigator.userAgent;
</script>"""


def expected_blocked(tcp: int, udp: int) -> set[str]:
    host = f"127.0.0.1:{tcp}"
    paths = ("fetch", "iframe", "popup", "beacon", "img", "worker-fetch")
    return {
        *(f"http://{host}/{path}" for path in paths),
        f"ws://{host}/ws",
        f"ws://{host}/worker-ws",
        f"stun:127.0.0.1:{udp}",
        f"turn:{host}?transport=tcp",
        "http://exfil.example/",  # dns-prefetch
        f"http://{host}/",  # preconnect
    }


def shoot(browser: object, page: str) -> Capture:
    read = {"index.html": page.encode()}.get
    return capture(browser, read, "/", VIEWPORT)  # type: ignore[arg-type]


def wait_for(condition: object, seconds: float) -> float:
    """Poll ``condition()`` until true or ``seconds`` pass; the seconds it took."""
    start = time.monotonic()
    while not condition() and time.monotonic() - start < seconds:  # type: ignore[operator]
        time.sleep(0.1)
    return time.monotonic() - start


def test_a_page_that_tries_everything_reaches_nothing(listener: Listener) -> None:
    page = everything(listener.tcp_port, listener.udp_port)
    # Control: the same page in a chromium on the host's network does get out, so this
    # listener would see a hole in the boundary.
    with sync_playwright() as pw:
        open_net = pw.chromium.launch(executable_path=chromium_path(), args=LAUNCH_ARGS)
        try:
            shoot(open_net, page)
            waited = wait_for(lambda: listener.connections and listener.packets, 30)
        finally:
            open_net.close()
    assert listener.connections, "control: chromium on the host's network opened no TCP"
    assert listener.packets, "control: chromium on the host's network sent no UDP"
    listener.connections.clear()
    listener.packets.clear()

    with open_browser() as browser:
        shot = shoot(browser, page)
        time.sleep(waited + 2)  # as long as the control needed, and more
    assert (listener.connections, listener.packets) == ([], [])
    blocked = {e.url for e in shot.network if e.outcome == "blocked"}
    assert expected_blocked(listener.tcp_port, listener.udp_port) <= blocked
    assert NetworkEvent("http://recon.invalid/", "served") in shot.network
    assert shot.failure is None


def test_page_script_sees_no_automation_tells(listener: Listener) -> None:
    with open_browser() as browser:
        shot = shoot(browser, everything(listener.tcp_port, listener.udp_port))
    tells = next(e["text"] for e in shot.dom if e["tag"] == "p")
    assert "webdriver=false" in tells
    assert "HeadlessChrome" not in tells and " Chrome/" in tells


# What a page can ask to tell whether it is being captured (README, "Boundaries").
TELLS = """<!doctype html><meta charset="utf-8"><main></main><script>
  const show = (name, value) => {
    const p = document.createElement('p');
    p.textContent = name + '=' + JSON.stringify(value);
    document.querySelector('main').append(p);
  };
  show('webdriver', navigator.webdriver);
  show('headless', /headless/i.test(navigator.userAgent + navigator.appVersion));
  show('plugins', navigator.plugins.length > 0 && navigator.mimeTypes.length > 0);
  show('chrome', typeof window.chrome);
  show('now', Date.now());
  show('date', new Date().toISOString());
  show('performance', performance.now());
  show('native clock', /\\[native code\\]/.test(Date.now.toString()));
  show('languages', navigator.languages);
  show('timezone', Intl.DateTimeFormat().resolvedOptions().timeZone);
  const worker = new Worker(URL.createObjectURL(new Blob(
    ['postMessage([navigator.webdriver, /headless/i.test(navigator.userAgent)])'],
    {type: 'text/javascript'})));
  worker.onmessage = (e) => show('worker', e.data);
</script>"""

HIDDEN = {  # the tells bot walls, analytics and consent banners read: as in a person's browser
    "webdriver": "false",
    "headless": "false",
    "plugins": "true",
    "chrome": '"object"',
    "worker": "[null,false]",  # workers: no webdriver property (chromium), no headless UA
}
SHOWN = {  # what makes renders repeatable, left visible: the paused clock, pinned locale
    "now": "1704067200000",
    "date": '"2024-01-01T00:00:00.000Z"',
    "performance": "0",
    "native clock": "false",
    "languages": '["en-US"]',
    "timezone": '"UTC"',
}


def tells(shot: Capture) -> dict[str, str]:
    rows = [str(e["text"]).split("=", 1) for e in shot.dom if e["tag"] == "p"]
    return {name: value for name, value in rows}


def test_the_capture_tells_the_policy_hides_are_hidden_and_the_rest_are_as_stated() -> None:
    with open_browser() as browser:
        seen = tells(shoot(browser, TELLS))
    assert {name: seen.get(name) for name in HIDDEN} == HIDDEN
    assert {name: seen.get(name) for name in SHOWN} == SHOWN


DETECTOR = """<!doctype html><meta charset="utf-8">
<style>body { margin: 0 } div { width: 320px; height: 120px }</style>
<div id="box"></div><p id="verdict"></p>
<script>
  const captured = Date.now() === 1704067200000 || !/\\[native code\\]/.test(Date.now.toString())
    || navigator.webdriver || /headless/i.test(navigator.userAgent);
  document.getElementById('box').style.background = captured ? 'rgb(200, 0, 0)' : 'rgb(0, 0, 200)';
  document.getElementById('verdict').textContent = captured ? 'captured' : 'a person';
</script>"""


def test_a_page_that_detects_capture_is_treated_alike_as_reference_and_as_candidate(
    tmp_path: Path,
) -> None:
    """The same detecting page, read as a case's reference is (a folder) and as a
    Candidate's build is (a stored tree): it detects the capture both times, and both
    captures are the same, pixels and DOM: detection changes what everyone is shown."""
    folder = tmp_path / "reference"
    folder.mkdir()
    (folder / "index.html").write_text(DETECTOR)
    store = Store(tmp_path / "store")
    candidate = tree_reader(store, put_tree(store, folder))
    with open_browser() as browser:
        as_reference = capture(browser, folder_reader(folder), "/", VIEWPORT)
        as_candidate = capture(browser, candidate, "/", VIEWPORT)
    assert "captured" in [e["text"] for e in as_reference.dom]
    assert as_candidate.dom == as_reference.dom
    assert as_candidate.full_png == as_reference.full_png
    assert as_candidate.viewport_png == as_reference.viewport_png


SECRET = "RECON-SECRET-NEXT-TO-THE-BUILD"


def escapes(secret: Path) -> list[str]:
    """URLs a page can ask for to read ``secret``, a file beside the build folder."""
    return [
        "/../secret.txt",
        "/..%2fsecret.txt",
        "/..%2F..%2Fsecret.txt",
        "/%2e%2e/secret.txt",
        "/%2e%2e%2fsecret.txt",
        "/a/..%2f..%2fsecret.txt",
        "/..\\secret.txt",
        "/%5c..%5csecret.txt",
        "/..%5c..%5csecret.txt",
        "/%252e%252e/secret.txt",
        "/%252e%252e%252fsecret.txt",
        "/..;/secret.txt",
        "/%00",
        "/index.html%00",
        "/%2e%2e%00/secret.txt",
        "/" + "a" * 300,
        "/" + "a/" * 2100 + "index.html",
        "http://recon.invalid//secret.txt",
        "//recon.invalid/../secret.txt",
        "/%2f%2e%2e%2fsecret.txt",
        f"http://recon.invalid/{secret}",  # path "//tmp/…": absolute
        f"/%2f{str(secret).lstrip('/').replace('/', '%2f')}",
        f"file://{secret}",
        "/index.html?../../secret.txt",
        "/index.html#../../secret.txt",
        "/index.html%3f/../../secret.txt",
        "/link.txt",
        "/secret.txt",
    ]


def fetch_all(urls: list[str]) -> str:
    """A page that fetches every URL and writes what came back into its own paragraph
    (wrapped anywhere: an over-long path's answer would make the page wider than a still
    may be, and clip it)."""
    return f"""<!doctype html><meta charset="utf-8">
<main id="rows" style="overflow-wrap:anywhere"></main>
<script>
  const urls = {json.dumps(urls)};
  const row = (i, text) => {{
    const p = document.createElement('p');
    p.textContent = 'row ' + i + ': ' + text;
    document.getElementById('rows').append(p);
  }};
  urls.forEach((url, i) => fetch(url)
    .then((r) => r.text().then((body) => row(i, r.status + ' ' + body)))
    .catch((e) => row(i, 'refused ' + e)));
</script>"""


def test_no_request_spelling_serves_a_byte_from_outside_the_build(tmp_path: Path) -> None:
    """A secret beside the build folder, and a link to it inside: the page asks for it every
    way it can spell a path, and only the build's own bytes ever come back."""
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    build = tmp_path / "build"
    build.mkdir()
    urls = escapes(secret)
    (build / "index.html").write_text(fetch_all(urls))
    (build / "link.txt").symlink_to(secret)
    with open_browser() as browser:
        shot = capture(browser, folder_reader(build), "/", VIEWPORT)
    rows = [e["text"] for e in shot.dom if e["tag"] == "p"]
    assert shot.failure is None
    assert sorted(int(r.split(":")[0].split()[1]) for r in rows) == list(range(len(urls)))
    assert not [r for r in rows if SECRET in r]
    answers = [r.split(": ", 1)[1] for r in rows]
    served_pages = [a for a in answers if a.startswith("200 ")]  # "?", "#": the page itself
    assert all(a.startswith("200 <!doctype html>") for a in served_pages), served_pages
    served = {build_path(urlsplit(e.url).path) for e in shot.network if e.outcome == "served"}
    assert served == {"index.html"}
    others = [a for a in answers if not a.startswith(("200 ", "404 not found: "))]
    assert others == ["refused TypeError: Failed to fetch"], rows  # the file: URL


MARK = "RECON_TEST_BROWSER"  # set in the environment chromium inherits, to find its processes


def chromium_processes(mark: str) -> list[int]:
    """This test's chromium processes: the browser, whose environment carries
    ``MARK=mark``, and every chromium process descended from it."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        with contextlib.suppress(OSError, ValueError):  # exited meanwhile, or not a process
            if os.readlink(f"{entry.path}/exe").endswith("/chromium"):
                stat = Path(entry.path, "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    browsers = {pid for pid in parents if f"{MARK}={mark}".encode() in environ(pid)}
    found = []
    for pid in parents:
        line = pid
        while line in parents and line not in browsers:
            line = parents[line]
        if line in browsers:
            found.append(pid)
    return found


def environ(pid: int) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return []


def test_every_chromium_process_is_in_an_empty_network_namespace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(MARK, tmp_path.name)
    ours = os.readlink("/proc/self/ns/net")
    read = {"index.html": b"<!doctype html><p>hello</p>"}.get
    with open_browser() as browser, open_page(browser, read, VIEWPORT) as session:
        load(session, "/", 5000)  # a renderer runs while the processes are looked at
        seen = {pid: network(pid) for pid in chromium_processes(tmp_path.name)}
    spaces = {pid: found for pid, found in seen.items() if found is not None}
    assert len(spaces) >= 3  # browser, renderer, network service at least
    assert all(space != ours for space, _ in spaces.values())
    assert all(names == ["lo"] for _, names in spaces.values()), spaces


def network(pid: int) -> tuple[str, list[str]] | None:
    """A process's network namespace and its interfaces; None once it has exited."""
    try:
        rows = Path(f"/proc/{pid}/net/dev").read_text().splitlines()[2:]
        return os.readlink(f"/proc/{pid}/ns/net"), [row.split(":")[0].strip() for row in rows]
    except OSError:
        return None


@pytest.mark.usefixtures("unshare_refused")
def test_no_namespace_permitted_is_a_harness_error_naming_the_fix() -> None:
    with pytest.raises(HarnessError) as err, open_browser():
        pytest.fail("chromium was launched without a network namespace")
    message = str(err.value)
    assert message.startswith(FIX)
    assert "run the harness as root" in message and "user namespaces" in message
    assert "--user --map-root-user --net" in message and "Operation not permitted" in message
    assert "\n" not in message


def test_no_unshare_at_all_is_a_harness_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(HarnessError, match=r"`unshare` not found.*util-linux"), open_browser():
        pytest.fail("chromium was launched without a network namespace")


def test_without_root_an_unprivileged_user_namespace_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where `unshare --net` alone is refused (no CAP_SYS_ADMIN), `--user --map-root-user
    --net` gives chromium the same empty network."""
    real = shutil.which("unshare")
    assert real is not None
    folder = tmp_path / "no-root"
    folder.mkdir()
    (folder / "unshare").write_text(
        '#!/bin/sh\nif [ "$1" = "--net" ]; then echo "unshare: Operation not permitted" >&2; '
        f'exit 1; fi\nexec {real} "$@"\n'
    )
    (folder / "unshare").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv(MARK, tmp_path.name)
    assert unshare_prefix()[1:] == ("--user", "--map-root-user", "--net", "--")
    with open_browser() as browser:
        shot = shoot(browser, "<!doctype html><p>hello</p>")
        mark = f"{MARK}={tmp_path.name}".encode()
        browsers = [p for p in chromium_processes(tmp_path.name) if mark in environ(p)]
        users = {os.readlink(f"/proc/{pid}/ns/user") for pid in browsers}
        nets = {os.readlink(f"/proc/{pid}/ns/net") for pid in browsers}
    assert shot.failure is None and any(e["text"] == "hello" for e in shot.dom)
    assert len(users) == 1 and os.readlink("/proc/self/ns/user") not in users
    assert len(nets) == 1 and os.readlink("/proc/self/ns/net") not in nets
