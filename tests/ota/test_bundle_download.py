"""The update agent's own download of a bundle (foosball.ota.rauc.BundleDownload) against
real HTTP servers on loopback: whole, cut short, stalled, refused. No root, no RAUC."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from foosball.ota.rauc import BundleDownload

BUNDLE = bytes(range(256)) * 1024  # 256 KiB


def serve(respond: Callable[[http.server.BaseHTTPRequestHandler], None]) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the standard library's name
            respond(self)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/pole.raucb"
    httpd.shutdown()
    httpd.server_close()


def headers(handler: http.server.BaseHTTPRequestHandler, length: int = len(BUNDLE)) -> None:
    handler.send_response(200)
    handler.send_header("Content-Length", str(length))
    handler.end_headers()


RELEASE = threading.Event()  # lets a stalling handler go once its test is over


def whole(handler: http.server.BaseHTTPRequestHandler) -> None:
    headers(handler)
    handler.wfile.write(BUNDLE)


def cut_short(handler: http.server.BaseHTTPRequestHandler) -> None:
    headers(handler)
    handler.wfile.write(BUNDLE[:1000])
    handler.close_connection = True


def stalls(handler: http.server.BaseHTTPRequestHandler) -> None:
    headers(handler)
    handler.wfile.write(BUNDLE[:4096])
    handler.wfile.flush()
    RELEASE.wait(10)


def too_big(handler: http.server.BaseHTTPRequestHandler) -> None:
    headers(handler, length=1 << 50)  # a petabyte: more than any disk here has free


def missing(handler: http.server.BaseHTTPRequestHandler) -> None:
    handler.send_error(404)


@pytest.fixture
def release() -> Iterator[None]:
    RELEASE.clear()
    yield
    RELEASE.set()


@pytest.mark.parametrize(("respond", "error"), [
    (whole, ""),
    (cut_short, "the server closed the connection after 1000 of 262144 bytes"),
    (stalls, "no data for 0.3 s from the server (stalled at 4096 of 262144 bytes)"),
    (too_big, "no room: the bundle is 1073741824 MiB, "),
    (missing, "HTTP 404 Not Found"),
])
def test_a_download_ends_whole_or_with_the_reason(
        respond: Callable[[http.server.BaseHTTPRequestHandler], None], error: str,
        tmp_path: Path, release: None) -> None:
    url = next(serve(respond))
    target = tmp_path / "ota" / "bundle.raucb"
    download = BundleDownload(url, target, stall_s=0.3, serial=1)
    download._thread.join(timeout=10)  # the test waits for its end; the agent polls view()

    view = download.view()
    if not error:
        assert (view.done, view.received, view.total, view.error) == (True, len(BUNDLE),
                                                                      len(BUNDLE), "")
        assert target.read_bytes() == BUNDLE
        assert target.stat().st_mode & 0o777 == 0o600  # only root reads what it installs
    else:
        assert not view.done and error in view.error, view.error
        assert not target.exists()  # nothing half-downloaded left on /data
