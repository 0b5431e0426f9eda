"""``uncobench view``: serve a report folder on 127.0.0.1 (a free port) until interrupted.

Only the files of the report folder are served (``report.html``, ``report.md``,
``metrics.json``, ``figures/``), read-only, never a listing of anything else; the page itself
needs no server (it is one self-contained file), so this is a convenience for opening it
from a remote shell or a browser that will not open local files.
"""

from __future__ import annotations

import re
import threading
import urllib.parse
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ._build import FIGURES_DIR, HTML_FILE, REPORT_FILES

HOST = "127.0.0.1"


# what a report folder holds (``_build``): anything else in the folder is not the report's
_SERVED = re.compile(
    rf"/(?:{'|'.join(map(re.escape, REPORT_FILES))}|{FIGURES_DIR}/[A-Za-z0-9_-]+\.(?:png|svg))"
)
_HOSTS = (HOST, "localhost")


class _Handler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # quiet: the command prints the URL
        pass

    def list_directory(self, path: str | Path) -> None:  # type: ignore[override]
        self.send_error(404, "no listings")
        return None

    def send_head(self) -> Any:
        """Only the report's own files, as regular files inside the folder: a folder served
        as it is may hold other files, or a symbolic link out of it. And only to a request
        addressed to this machine: another name resolving here (DNS rebinding) would let a
        web page read the report."""
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]  # (no port: port 80)
        if host not in _HOSTS:
            self.send_error(403, "not addressed to 127.0.0.1")
            return None
        folder = Path(self.directory).resolve()
        target = Path(self.translate_path(self.path)).resolve()
        served = _SERVED.fullmatch(urllib.parse.urlsplit(self.path).path)
        if not served or not target.is_relative_to(folder) or not target.is_file():
            self.send_error(404, "not a file of the report")
            return None
        return super().send_head()

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()


class ReportServer:
    """A report folder served on ``127.0.0.1:port`` (``port=0``: a free one) in a thread."""

    def __init__(self, folder: str | Path, port: int = 0) -> None:
        self.folder = Path(folder).resolve()
        handler = partial(_Handler, directory=str(self.folder))
        self.httpd = ThreadingHTTPServer((HOST, port), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.httpd.server_address[1]}/{HTML_FILE}"

    def start(self) -> ReportServer:
        if not self.thread.is_alive():
            self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def __enter__(self) -> ReportServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_report(folder: str | Path, port: int = 0) -> ReportServer:
    """A started server for the report in ``folder``; stop it with :meth:`ReportServer.stop`."""
    return ReportServer(folder, port).start()
