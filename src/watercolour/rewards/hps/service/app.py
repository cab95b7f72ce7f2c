"""The HPSv3 scoring service: images + prompt -> (mu, sigma) over HTTP.

``hpsv3`` pins ``transformers==4.45.2``, which cannot share an environment with the trainer
(transformers 5), so HPSv3 runs here, in its own virtual environment, and the reward calls it
over HTTP (:class:`watercolour.rewards.hps.client.HpsClient`). This file imports nothing from
``watercolour``: copy the folder anywhere (a Hugging Face Space, a GPU box) and run it.

API::

    GET  /health  -> {"status": "ok", "scorer": "hpsv3" | "stand-in", "device": ..., ...}
    POST /score   {"prompt": "a peach hibiscus in watercolour",
                   "images": ["<base64 PNG>", ...]}          (at most MAX_IMAGES)
                  -> {"scores": [{"mu": 7.21, "sigma": 1.03}, ...], "scorer": ..., "seconds": ...}

Errors are JSON ``{"error": "..."}``: 400 for a bad request, 500 when the model fails.

Scorers (``--scorer`` or ``HPS_SCORER``):

- ``hpsv3``: ``hpsv3.HPSv3RewardInferencer(device=...)``, weights from the Hub
  (``MizzenAI/HPSv3``, ~7B on a Qwen2-VL backbone: a GPU with ~20 GB; bf16). Requests are
  scored one batch at a time (a lock), in chunks of ``HPS_BATCH`` (default 8).
- ``stand-in``: a deterministic formula over pixel statistics, **not a model**, with mu on a
  similar scale (about -2..12): for testing this HTTP shell without weights or a GPU.

Run::

    python app.py --scorer hpsv3 --host 0.0.0.0 --port 8765 --device cuda
    python app.py --scorer stand-in --port 8765          # anywhere Pillow is installed
"""

from __future__ import annotations

import argparse
import base64
import binascii
import io
import json
import os
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_IMAGES = 64
MAX_BODY = 64 * 1024 * 1024


class BadRequest(ValueError):
    pass


# ---------------------------------------------------------------- scorers


class StandInScorer:
    """Not a model: mu from the picture's colourfulness, contrast and coverage, sigma fixed.
    Deterministic, for tests of the service and its clients."""

    name = "stand-in"
    device = "cpu"

    def score(self, images: list[bytes], prompt: str) -> list[tuple[float, float]]:
        from PIL import Image, ImageStat

        out = []
        for data in images:
            image = Image.open(io.BytesIO(data)).convert("RGB")
            image.thumbnail((128, 128))
            stat = ImageStat.Stat(image)
            (r, g, b), sd = stat.mean, stat.stddev
            spread = min(1.0, sum(sd) / 3 / 64.0)
            colour = min(1.0, (abs(r - g) + abs(b - g)) / 60.0)
            dark = 1.0 - (0.299 * r + 0.587 * g + 0.114 * b) / 255.0
            mu = -2.0 + 4.0 * spread + 10.0 * colour - 2.0 * max(0.0, dark - 0.5)
            out.append((round(mu, 4), 1.0))
        return out


class HPSv3Scorer:
    """HPSv3 itself (needs ``pip install hpsv3==1.0.0``, its weights and, in practice, a
    GPU)."""

    name = "hpsv3"

    def __init__(self, device: str | None = None, batch: int | None = None) -> None:
        import torch
        from hpsv3 import HPSv3RewardInferencer

        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.batch = batch or int(os.environ.get("HPS_BATCH", "8"))
        self._torch = torch
        self.model = HPSv3RewardInferencer(device=self.device)

    def score(self, images: list[bytes], prompt: str) -> list[tuple[float, float]]:
        out: list[tuple[float, float]] = []
        with tempfile.TemporaryDirectory(prefix="hps-") as folder:
            paths = []
            for i, data in enumerate(images):
                path = os.path.join(folder, f"{i}.png")
                with open(path, "wb") as handle:
                    handle.write(data)
                paths.append(path)
            for start in range(0, len(paths), self.batch):
                chunk = paths[start:start + self.batch]
                with self._torch.inference_mode():
                    rewards = self.model.reward(prompts=[prompt] * len(chunk),
                                                image_paths=chunk)
                for row in rewards:
                    out.append((float(row[0].item()), float(row[1].item())))
        return out


def make_scorer(kind: str, device: str | None = None):
    if kind == "stand-in":
        return StandInScorer()
    if kind == "hpsv3":
        return HPSv3Scorer(device)
    raise SystemExit(f"unknown scorer {kind!r}: choose hpsv3 or stand-in")


# ---------------------------------------------------------------- HTTP


def decode_request(body: bytes) -> tuple[str, list[bytes]]:
    try:
        payload = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise BadRequest(f"the body is not JSON: {err}") from err
    if not isinstance(payload, dict):
        raise BadRequest("the body must be a JSON object")
    prompt = payload.get("prompt")
    images = payload.get("images")
    if not isinstance(prompt, str) or not prompt.strip():
        raise BadRequest("'prompt' must be a non-empty string")
    if not isinstance(images, list) or not images:
        raise BadRequest("'images' must be a non-empty list of base64 PNGs")
    if len(images) > MAX_IMAGES:
        raise BadRequest(f"at most {MAX_IMAGES} images per request, got {len(images)}")
    decoded = []
    for i, item in enumerate(images):
        try:
            data = base64.b64decode(item, validate=True)
        except (binascii.Error, TypeError, ValueError) as err:
            raise BadRequest(f"images[{i}] is not base64: {err}") from err
        if not data.startswith(b"\x89PNG\r\n\x1a\n") and not data.startswith(b"\xff\xd8"):
            raise BadRequest(f"images[{i}] is not a PNG or JPEG")
        decoded.append(data)
    return prompt, decoded


def make_handler(scorer, started: float):
    lock = threading.Lock()
    served = {"requests": 0, "images": 0}

    class Handler(BaseHTTPRequestHandler):
        server_version = "watercolour-hps/1"

        def log_message(self, fmt: str, *args: Any) -> None:  # quiet unless asked
            if os.environ.get("HPS_LOG"):
                super().log_message(fmt, *args)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/health", ""):
                self._send(200, {"status": "ok", "scorer": scorer.name,
                                 "device": getattr(scorer, "device", "?"),
                                 "uptime_s": round(time.monotonic() - started, 1), **served})
            else:
                self._send(404, {"error": f"no route GET {self.path}"})

        def do_POST(self) -> None:
            if self.path.rstrip("/") != "/score":
                self._send(404, {"error": f"no route POST {self.path}"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0 or length > MAX_BODY:
                self._send(400 if length <= 0 else 413,
                           {"error": f"body length {length} (1..{MAX_BODY} bytes)"})
                return
            try:
                prompt, images = decode_request(self.rfile.read(length))
            except BadRequest as err:
                self._send(400, {"error": str(err)})
                return
            start = time.monotonic()
            try:
                with lock:
                    scores = scorer.score(images, prompt)
            except Exception as err:  # the model failed: the client sees a 500
                self._send(500, {"error": f"{type(err).__name__}: {err}"[:500]})
                return
            served["requests"] += 1
            served["images"] += len(images)
            self._send(200, {"scores": [{"mu": mu, "sigma": sigma} for mu, sigma in scores],
                             "scorer": scorer.name,
                             "seconds": round(time.monotonic() - start, 4)})

    return Handler


def make_server(scorer, host: str = "127.0.0.1", port: int = 8765) -> ThreadingHTTPServer:
    """A server (not yet serving): ``server.serve_forever()``; port 0 picks a free one."""
    server = ThreadingHTTPServer((host, port), make_handler(scorer, time.monotonic()))
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="HPSv3 scoring service")
    parser.add_argument("--scorer", default=os.environ.get("HPS_SCORER", "hpsv3"),
                        choices=["hpsv3", "stand-in"])
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8765")))
    parser.add_argument("--device", default=os.environ.get("HPS_DEVICE"),
                        help="cuda, cuda:1, cpu (default: cuda when available)")
    args = parser.parse_args(argv)
    scorer = make_scorer(args.scorer, args.device)
    server = make_server(scorer, args.host, args.port)
    host, port = server.server_address[:2]
    print(f"HPS service ({scorer.name} on {getattr(scorer, 'device', '?')}) at "
          f"http://{host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
