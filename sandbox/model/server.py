"""The scripted model over loopback HTTP, for processes that reach it via ANTHROPIC_BASE_URL."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sandbox.model.fake import ScriptedModel


class ScriptedServer:
    """``with ScriptedServer(model) as server: os.environ["ANTHROPIC_BASE_URL"] = server.url``."""

    def __init__(self, model: ScriptedModel, host: str = "127.0.0.1", port: int = 0) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the scripted model only listens on loopback")
        self.model = model
        handler = _handler_for(model)
        self._httpd = ThreadingHTTPServer((host, port), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *_exc_info: object) -> None:
        self.close()


def _handler_for(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            response = model.respond(self.command, self.path.split("?")[0], headers, raw)
            body = response.content
            self.send_response(response.status_code)
            for key, value in response.headers.items():
                if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(key, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = _serve
        do_GET = _serve

        def log_message(self, format: str, *args: object) -> None:
            return  # quiet: tests and the demo read the model's own records instead

    return Handler
