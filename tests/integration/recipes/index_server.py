"""A tiny PEP 691 + PEP 658 index on 127.0.0.1 for the index-metadata tests.

Routes map a path to (status, content type, body, delay seconds); `hits` counts requests per
path. JSON project pages are served only when the client asks for PEP 691 JSON (as real
indexes do with content negotiation).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, List, Optional, Tuple
from urllib.parse import unquote

PEP691 = "application/vnd.pypi.simple.v1+json"


def metadata_text(
    name: str, version: str, requires: List[str], requires_python: str = ">=3.10"
) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Requires-Python: {requires_python}",
    ]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n\nlong description\n"


class IndexServer:
    def __init__(self) -> None:
        self.routes: Dict[str, Tuple[int, str, bytes, float]] = {}
        self.sequences: Dict[str, List[Tuple[int, str, bytes, float]]] = {}
        self.hits: Dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802
                path = unquote(self.path.split("?", 1)[0])
                server.hits[path] = server.hits.get(path, 0) + 1
                seq = server.sequences.get(path)
                if seq:
                    route = seq.pop(0) if len(seq) > 1 else seq[0]
                else:
                    route = server.routes.get(path)
                if route is None:
                    self.send_error(404)
                    return
                status, ctype, body, delay = route
                if ctype == PEP691 and PEP691 not in (self.headers.get("Accept") or ""):
                    self.send_error(406)
                    return
                if delay:
                    time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False  # a hanging handler must not hold up the test
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> "IndexServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- content -----------------------------------------------------------------------

    def add_project(self, base: str, name: str, wheels: List[Tuple[str, Optional[str]]]) -> None:
        """base "/whl/cu126"; wheels: (filename, METADATA text or None for no PEP 658 file)."""
        files = []
        for filename, meta in wheels:
            entry = {
                "filename": filename,
                "url": filename.replace("+", "%2B"),
                "hashes": {"sha256": "0" * 64},
            }
            if meta is not None:
                digest = hashlib.sha256(meta.encode()).hexdigest()
                entry["core-metadata"] = {"sha256": digest}
                entry["data-dist-info-metadata"] = {"sha256": digest}
                self.routes[f"{base}/{name}/{filename}.metadata"] = (
                    200,
                    "text/plain",
                    meta.encode(),
                    0.0,
                )
            files.append(entry)
        page = {"meta": {"api-version": "1.1"}, "name": name, "files": files}
        self.routes[f"{base}/{name}/"] = (200, PEP691, json.dumps(page).encode(), 0.0)

    def add_json(self, path: str, doc: object) -> None:
        self.routes[path] = (200, "application/json", json.dumps(doc).encode(), 0.0)
