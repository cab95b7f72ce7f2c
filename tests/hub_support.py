"""A fake Hugging Face Hub on 127.0.0.1 for the tests of what a run pushes (no network)."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OID = "a" * 40


class FakeHub:
    """The Hub routes a commit takes (create the repository, check a README's metadata, ask
    how to upload each file: 'regular', i.e. inline; the commit), recording every commit's
    files and every README checked."""

    def __init__(self) -> None:
        self.commits: list[dict] = []
        self.validated: list[dict] = []
        self.fail_commits = False
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _reply(self, code: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._reply(404, {"error": f"no {self.path} here"})

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path == "/api/repos/create":
                    request = json.loads(body)
                    name = f"{request.get('organization')}/{request['name']}"
                    return self._reply(200, {"url": f"{hub.url}/{name}", "name": name})
                if self.path == "/api/validate-yaml":
                    hub.validated.append(json.loads(body))
                    return self._reply(200, {})
                parts = self.path.split("/")  # /api/models/OWNER/NAME/(preupload|commit)/REV
                if parts[5:6] == ["preupload"]:
                    files = json.loads(body)["files"]
                    return self._reply(200, {"files": [
                        {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                        for f in files]})
                if parts[5:6] == ["commit"]:
                    if hub.fail_commits:
                        return self._reply(500, {"error": "the Hub is down"})
                    lines = [json.loads(x) for x in body.decode().splitlines() if x.strip()]
                    hub.commits.append({
                        "repo": f"{parts[3]}/{parts[4]}", "type": parts[2], "message": lines[0]["value"]["summary"],
                        "files": {x["value"]["path"]: base64.b64decode(x["value"]["content"])
                                  for x in lines if x["key"] == "file"}})
                    return self._reply(200, {
                        "commitUrl": f"{hub.url}/{parts[3]}/{parts[4]}/commit/{OID}",
                        "commitOid": OID})
                return self._reply(404, {"error": f"no {self.path} here"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def api(self):
        from huggingface_hub import HfApi

        return HfApi(endpoint=self.url, token="hf_fake")

    def wait_for(self, n: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.commits) < n and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(self.commits) >= n, self.commits
