"""Runs *inside* the container: a loopback TCP listener that forwards each connection to
the egress proxy's unix socket. Standard library only (it runs on the image's python3);
the harness starts it before the agent with ``python3 /recon/bridge.py SOCKET PORT`` and
waits for the ``ready`` line it prints once it listens.

Each direction is copied until end of file, then half-closed, so a client that shuts down
its sending side still receives the whole answer.
"""

import contextlib
import socket
import sys
import threading


def pipe(src: socket.socket, dst: socket.socket, done: threading.Semaphore) -> None:
    try:
        while chunk := src.recv(65536):
            dst.sendall(chunk)
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        for s in (src, dst):  # unblock the other direction
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
    finally:
        if not done.acquire(blocking=False):  # the other direction has finished too
            src.close()
            dst.close()


def serve(path: str, port: int) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    print("ready", flush=True)
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(path)
        except OSError:
            client.close()
            upstream.close()
            continue
        done = threading.Semaphore(1)
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=pipe, args=(a, b, done), daemon=True).start()


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
