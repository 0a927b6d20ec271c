"""Request interception serves the build tree and nothing else, however the path is spelt.

Pure tests of :func:`recon.render.serve.build_path` and of the route handler with a
stand-in route (no browser); ``test_boundary.py`` makes the same requests from a page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from recon.curate.freeze import folder_reader
from recon.render.serve import MAX_NAME_BYTES, ORIGIN, NetworkEvent, Reader, build_path, serve

SECRET = b"RECON-SECRET-NEXT-TO-THE-BUILD"

# (URL path as chromium sends it, what it may name in the build, or None: nothing)
TRICKS: list[tuple[str, str | None]] = [
    ("/..%2fsecret.txt", None),
    ("/..%2F..%2Fsecret.txt", None),
    ("/%2e%2e/secret.txt", None),
    ("/%2E%2E%2fsecret.txt", None),
    ("/a/..%2f..%2fsecret.txt", None),
    ("/a/%2e%2e/%2e%2e/secret.txt", None),
    ("/..%5csecret.txt", "..\\secret.txt"),  # a backslash is part of a name
    ("/%5c..%5c..%5csecret.txt", "\\..\\..\\secret.txt"),
    ("/%252e%252e/secret.txt", "%2e%2e/secret.txt"),  # decoded once only
    ("/%252e%252e%252fsecret.txt", "%2e%2e%2fsecret.txt"),
    ("/%00", None),
    ("/index.html%00.png", None),
    ("/index.html%0a", None),
    ("/" + "a" * (MAX_NAME_BYTES + 1), None),
    ("/" + "a/" * 2100 + "index.html", None),  # over PATH_MAX in all
    ("//secret.txt", "secret.txt"),  # inside the build: its own secret.txt, if any
    ("/%2f%2fsecret.txt", "secret.txt"),
    ("/%2e%2e%2f%2e%2e%2fetc%2fpasswd", None),
    ("/%2fetc%2fpasswd", "etc/passwd"),  # absolute once decoded: still build-relative
    ("/index.html%3f..%2f..%2fsecret.txt", "secret.txt"),  # a name "index.html?.."
    ("/index.html%23..%2f..%2f..%2fsecret.txt", None),
    ("/link.txt", "link.txt"),  # a link in the build to the secret next to it
]


@pytest.mark.parametrize(("url_path", "names"), TRICKS, ids=[t[0][:40] for t in TRICKS])
def test_build_path_never_leaves_the_build(url_path: str, names: str | None) -> None:
    assert build_path(url_path) == names


def test_build_path_keeps_ordinary_paths() -> None:
    assert build_path("/") == "index.html"
    assert build_path("/about/") == "about/index.html"
    assert build_path("/a/b/../c.css") == "a/c.css"
    assert build_path("/caf%C3%A9.png") == "café.png"
    assert build_path("/" + "é" * (MAX_NAME_BYTES // 2)) == "é" * (MAX_NAME_BYTES // 2)
    assert build_path("/" + "é" * (MAX_NAME_BYTES // 2 + 1)) is None  # bytes, not characters


@dataclass
class Route:
    """What :func:`serve` uses of a playwright route, recording its answer."""

    url: str
    answer: dict[str, Any] = field(default_factory=dict)

    @property
    def request(self) -> SimpleNamespace:
        return SimpleNamespace(url=self.url)

    def fulfill(self, **answer: Any) -> None:
        self.answer = answer

    def abort(self, reason: str) -> None:
        self.answer = {"aborted": reason}


@pytest.fixture
def planted(tmp_path: Path) -> Reader:
    """A build folder whose parent holds a secret, with a link to it inside the build, read
    as the curator's reference is (:func:`recon.curate.freeze.folder_reader`)."""
    (tmp_path / "secret.txt").write_bytes(SECRET)
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "passwd").write_bytes(SECRET)
    build = tmp_path / "build"
    (build / "a").mkdir(parents=True)
    (build / "index.html").write_bytes(b"<p>home</p>")
    (build / "link.txt").symlink_to(tmp_path / "secret.txt")
    return folder_reader(build)


@pytest.mark.parametrize(("url_path", "names"), TRICKS, ids=[t[0][:40] for t in TRICKS])
def test_the_handler_serves_no_byte_from_outside_the_build(
    planted: Reader, url_path: str, names: str | None
) -> None:
    """Each trick is answered as missing, never with the secret, and never as a harness
    failure (a NUL or an over-long name once made the folder reader raise)."""
    events: list[NetworkEvent] = []
    broken: list[Exception] = []
    route = Route(ORIGIN + url_path)
    serve(planted, events.append, broken, route)  # type: ignore[arg-type]
    assert broken == []
    assert route.answer["status"] == 404 and SECRET not in route.answer["body"].encode()
    assert events == [NetworkEvent(route.url, "missing")]


def test_the_handler_serves_build_files(planted: Reader) -> None:
    events: list[NetworkEvent] = []
    route = Route(ORIGIN + "/a/%2e%2e/index.html")
    serve(planted, events.append, [], route)  # type: ignore[arg-type]
    assert (route.answer["status"], route.answer["body"]) == (200, b"<p>home</p>")
    assert events == [NetworkEvent(route.url, "served")]


def test_a_reader_never_sees_a_path_outside_the_build() -> None:
    """Whatever reader serves the build (a stored tree, a folder), it is only asked for
    build-relative paths that stay inside it."""
    asked: list[str] = []

    def read(path: str) -> bytes | None:
        asked.append(path)
        return None

    for url_path, _ in TRICKS:
        serve(read, lambda _: None, [], Route(ORIGIN + url_path))  # type: ignore[arg-type]
    assert asked == [names for _, names in TRICKS if names is not None]
    for path in asked:
        assert not path.startswith("/") and ".." not in path.split("/")
        assert "\0" not in path
