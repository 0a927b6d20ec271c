"""The npm registry of the offline dependency store, run inside the attempt container.

Started by the harness (as uid 65534) before the agent; ``python3 deps_registry.py <npm dir>
<port>`` serves, on the container's own loopback, the packuments and tarballs that
``recon deps fetch`` wrote into the read-only store. Anything else is a 404 that says the
package is not in the offline store, so ``npm install`` fails at once instead of hanging.
Standard library only: it runs on the image's python3.
"""

import http.server
import json
import sys
import urllib.parse
from pathlib import Path


def main(root: Path, port: int) -> None:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = urllib.parse.unquote(self.path.split("?", 1)[0]).lstrip("/")
            if path.startswith("-/tarballs/") and "/" not in path[len("-/tarballs/") :]:
                self._file(root / "tarballs" / path[len("-/tarballs/") :], "application/gzip")
            elif path and ".." not in path and path.count("/") <= 1:
                self._file(root / (path.replace("/", "%2f") + ".json"), "application/json")
            else:
                self._missing(path)

        def _file(self, file: Path, kind: str) -> None:
            if not file.is_file():
                self._missing(file.name)
                return
            data = file.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _missing(self, name: str) -> None:
            body = {"error": f"{name}: not in the offline dependency store (no registry access)"}
            data = json.dumps(body).encode()
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
