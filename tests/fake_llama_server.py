"""A stand-in for the llama server in lifecycle tests: ``python fake_llama_server.py PORT OWNER``
answers ``/v1/models`` and ``/props`` on 127.0.0.1:PORT and exits when OWNER is gone, like
:mod:`uncobench_z3.models.llama_server` (whose owner watch it reuses)."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from uncobench_z3.models.llama_server import _watch


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = {"object": "list", "data": []} if self.path == "/v1/models" else {"total_slots": 1}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    port, owner = int(sys.argv[1]), int(sys.argv[2])
    threading.Thread(target=_watch, args=(owner,), daemon=True).start()
    ThreadingHTTPServer(("127.0.0.1", port), _Handler).serve_forever()
