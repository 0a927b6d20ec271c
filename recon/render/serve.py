"""Serving a build into the page by request interception: no port, no HTTP server.

The build is served at :data:`ORIGIN` from a ``read(path) -> bytes | None`` callable;
every other request (another host, a web socket) is aborted and logged as ``blocked``,
which is the policy evidence of a capture. A ``read`` that raises is the harness's
fault, not the page's: it is kept in ``broken`` for the caller to raise.
"""

from __future__ import annotations

import mimetypes
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from playwright.sync_api import Route, WebSocketRoute

ORIGIN = "http://recon.invalid"
MAX_NAME_BYTES = 255
"""The longest file name (in UTF-8 bytes) a build can serve: a Linux file system's limit."""
MAX_PATH_BYTES = 4095
"""The longest build-relative path a build can serve (Linux ``PATH_MAX``, less its NUL)."""

Reader = Callable[[str], bytes | None]


@dataclass(frozen=True)
class NetworkEvent:
    url: str
    outcome: str  # "served" | "missing" | "blocked"


Log = Callable[[NetworkEvent], None]


_ORIGIN_PARTS = urlsplit(ORIGIN)
_MIME = mimetypes.MimeTypes()  # built-in table only: independent of the host's mime.types
_WEB_TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".webp": "image/webp",
}


def serve(read: Reader, log: Log, broken: list[Exception], route: Route) -> None:
    """Answer one intercepted request from the build, or block it; log it either way."""
    url = route.request.url
    parts = urlsplit(url)
    if (parts.scheme, parts.netloc) != (_ORIGIN_PARTS.scheme, _ORIGIN_PARTS.netloc):
        log(NetworkEvent(url, "blocked"))
        route.abort("blockedbyclient")
        return
    path = build_path(parts.path)
    try:
        body = None if path is None else read(path)
    except Exception as exc:  # a store failure must not pass for a broken page
        broken.append(exc)
        route.abort("failed")
        return
    if path is None or body is None:
        log(NetworkEvent(url, "missing"))
        route.fulfill(status=404, content_type="text/plain", body=f"not found: {parts.path}")
        return
    log(NetworkEvent(url, "served"))
    route.fulfill(status=200, content_type=_content_type(path), body=body)


def refuse_socket(log: Log, ws: WebSocketRoute) -> None:
    log(NetworkEvent(ws.url, "blocked"))
    ws.close()


def build_path(url_path: str) -> str | None:
    """URL path -> build-relative path; directories map to their ``index.html``.

    The path is percent-decoded once (``%252e`` stays the name ``%2e``), so an encoded
    slash separates names as a slash does, and a backslash is part of a name. None for a
    path no build file can have, which is answered as missing without reading anything: a
    ``..`` that climbs out of the build (however it was encoded), a NUL or other control
    character, a name over :data:`MAX_NAME_BYTES` or a path over :data:`MAX_PATH_BYTES`.
    """
    path = unquote(url_path) or "/"
    if path.endswith("/"):
        path += "index.html"
    names: list[str] = []
    for name in path.split("/"):
        if name == "..":
            if not names:
                return None
            names.pop()
        elif name not in ("", "."):
            names.append(name)
    found = "/".join(names)
    return found if names and _fits(found) else None


def _fits(path: str) -> bool:
    """True when ``path`` could name a file of a build on any file system we serve from."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        return False
    sizes = [len(name.encode("utf-8", "surrogateescape")) for name in path.split("/")]
    return sum(sizes) + len(sizes) - 1 <= MAX_PATH_BYTES and max(sizes) <= MAX_NAME_BYTES


def _content_type(path: str) -> str:
    ext = posixpath.splitext(path)[1].lower()
    kind = _WEB_TYPES.get(ext) or _MIME.guess_type(path)[0] or "application/octet-stream"
    textual = kind.startswith("text/") or kind in {"application/json", "image/svg+xml"}
    return f"{kind}; charset=utf-8" if textual else kind
