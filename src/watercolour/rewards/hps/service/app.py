"""The HPSv3 scoring service: images + prompt -> (mu, sigma) over HTTP.

``hpsv3`` pins ``transformers==4.45.2``, which cannot share an environment with the trainer
(transformers 5), so HPSv3 runs here, in its own virtual environment, and the reward calls it
over HTTP (:class:`watercolour.rewards.hps.client.HpsClient`). This file imports nothing from
``watercolour``: copy the folder anywhere (a Hugging Face Space, a GPU box) and run it.

API::

    GET  /health  -> {"status": "loading" | "ready" | "failed", "scorer": "hpsv3", "device":
                      "cuda", "error": null | "why it failed", "load_s": ..., ...}   (always 200)
    POST /score   {"prompt": "a peach hibiscus in watercolour",
                   "images": ["<base64 PNG>", ...]}          (at most MAX_IMAGES)
                  -> {"scores": [{"mu": 7.21, "sigma": 1.03}, ...], "scorer": ..., "seconds": ...}

Errors are JSON ``{"error": "..."}``: 400 for a bad request, 500 when the model fails, 503
while the model is loading (with ``Retry-After``) or after it failed to load.

The server listens at once and loads the model in the background (the first start downloads
~33 GB), so ``/health`` answers throughout and a failed load is reported there, with its
reason, instead of killing the process. ``sigma`` is HPSv3's uncertainty: the model's second
output is log sigma, and the service returns ``exp`` of it.

Scorers (``--scorer`` or ``HPS_SCORER``):

- ``hpsv3``: ``hpsv3.HPSv3RewardInferencer(device=...)``, weights from the Hub
  (``MizzenAI/HPSv3``, ~7B on a Qwen2-VL backbone: ~20 GB of GPU memory, ~33 GB of host RAM
  while loading). It refuses to start when CUDA is not available unless ``--device cpu``
  is asked for (on the CPU every score would outlast the client's timeout). Requests are
  scored one batch at a time (a lock), in chunks of ``HPS_BATCH`` (default 8). ``HF_HOME``
  defaults to ``/data/.huggingface`` where ``/data`` (a Space's persistent storage) is
  writable, so a restart does not download the weights again.
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
import math
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_IMAGES = 64
MAX_BODY = 64 * 1024 * 1024
PERSISTENT = "/data"
"""A Hugging Face Space's persistent storage, when it has some."""


class BadRequest(ValueError):
    pass


class DeviceRefused(RuntimeError):
    """HPSv3 would run on the CPU without being asked to."""


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

        self.device = resolve_device(device)
        from hpsv3 import HPSv3RewardInferencer

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
                out += mu_sigma(rewards)
        return out


def mu_sigma(rewards: Any) -> list[tuple[float, float]]:
    """(mu, sigma) per row of HPSv3's output, whose rows are (mu, log sigma)."""
    return [(float(row[0].item()), math.exp(float(row[1].item()))) for row in rewards]


def resolve_device(requested: str | None) -> str:
    """``requested``, or ``cuda`` when torch can use it. Raises :class:`DeviceRefused` when
    it would be the CPU (or CUDA is asked for and unavailable), unless ``cpu`` is asked
    for."""
    if requested == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return requested or "cuda"
    built = torch.version.cuda or "no CUDA"
    raise DeviceRefused(
        f"CUDA is not available to torch {torch.__version__} (built for {built}; the NVIDIA "
        "driver must support that CUDA version); HPSv3 on the CPU would outlast every "
        "client timeout. Pass --device cpu (HPS_DEVICE=cpu) to run it there anyway.")


def default_hf_home(environ: Mapping[str, str], persistent: str = PERSISTENT) -> str | None:
    """Where the Hub cache should go when ``HF_HOME`` is unset: on persistent storage when
    there is a writable one; else None (the Hub's default)."""
    if environ.get("HF_HOME"):
        return None
    if os.path.isdir(persistent) and os.access(persistent, os.W_OK):
        return os.path.join(persistent, ".huggingface")
    return None


def make_scorer(kind: str, device: str | None = None):
    if kind == "stand-in":
        return StandInScorer()
    if kind == "hpsv3":
        return HPSv3Scorer(device)
    raise SystemExit(f"unknown scorer {kind!r}: choose hpsv3 or stand-in")


class ScorerSlot:
    """The scorer, loaded in a background thread: ``status`` is ``loading``, ``ready`` or
    ``failed`` (``error`` says why)."""

    def __init__(self, load: Callable[[], Any], name: str, device: str) -> None:
        self._load = load
        self.name = name
        self.device = device
        self.scorer: Any = None
        self.status = "loading"
        self.error: str | None = None
        self.load_s: float | None = None
        self._started = time.monotonic()

    @classmethod
    def ready(cls, scorer: Any) -> ScorerSlot:
        slot = cls(lambda: scorer, scorer.name, getattr(scorer, "device", "?"))
        slot._finish()
        return slot

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self._finish, name="load-scorer", daemon=True)
        thread.start()
        return thread

    def _finish(self) -> None:
        try:
            scorer = self._load()
        except BaseException as err:  # the reason goes to /health; the server stays up
            self.error = f"{type(err).__name__}: {err}"[:500]
            self.status = "failed"
            print(f"HPS service: the model failed to load: {self.error}", file=sys.stderr,
                  flush=True)
        else:
            self.scorer = scorer
            self.device = getattr(scorer, "device", self.device)
            self.status = "ready"
        self.load_s = round(time.monotonic() - self._started, 1)

    def unready(self) -> str | None:
        """Why /score cannot answer now, or None."""
        if self.status == "loading":
            waited = time.monotonic() - self._started
            return f"the model is still loading ({waited:.0f} s so far)"
        if self.status == "failed":
            return f"the model failed to load: {self.error}"
        return None

    def health(self) -> dict[str, Any]:
        return {"status": self.status, "scorer": self.name, "device": self.device,
                "error": self.error, "load_s": self.load_s}


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


def make_handler(slot: ScorerSlot, started: float):
    lock = threading.Lock()
    served = {"requests": 0, "images": 0}

    class Handler(BaseHTTPRequestHandler):
        server_version = "watercolour-hps/1"

        def log_message(self, fmt: str, *args: Any) -> None:  # quiet unless asked
            if os.environ.get("HPS_LOG"):
                super().log_message(fmt, *args)

        def _send(self, status: int, payload: dict[str, Any],
                  headers: Mapping[str, str] | None = None) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/health", ""):
                self._send(200, {**slot.health(),
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
            why = slot.unready()
            if why is not None:
                self._send(503, {"error": why, "status": slot.status},
                           {"Retry-After": "30"} if slot.status == "loading" else None)
                return
            start = time.monotonic()
            try:
                with lock:
                    scores = slot.scorer.score(images, prompt)
            except Exception as err:  # the model failed: the client sees a 500
                self._send(500, {"error": f"{type(err).__name__}: {err}"[:500]})
                return
            served["requests"] += 1
            served["images"] += len(images)
            self._send(200, {"scores": [{"mu": mu, "sigma": sigma} for mu, sigma in scores],
                             "scorer": slot.name,
                             "seconds": round(time.monotonic() - start, 4)})

    return Handler


def make_server(scorer: Any, host: str = "127.0.0.1", port: int = 8765
                ) -> ThreadingHTTPServer:
    """A server (not yet serving): ``server.serve_forever()``; port 0 picks a free one.
    ``scorer``: a ready scorer or a :class:`ScorerSlot` (start it after binding)."""
    slot = scorer if isinstance(scorer, ScorerSlot) else ScorerSlot.ready(scorer)
    server = ThreadingHTTPServer((host, port), make_handler(slot, time.monotonic()))
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="HPSv3 scoring service")
    parser.add_argument("--scorer", default=os.environ.get("HPS_SCORER", "hpsv3"),
                        choices=["hpsv3", "stand-in"])
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8765")))
    parser.add_argument("--device", default=os.environ.get("HPS_DEVICE"),
                        help="cuda, cuda:1, cpu (default: cuda; the CPU only when asked)")
    args = parser.parse_args(argv)
    if args.scorer == "stand-in":
        slot = ScorerSlot.ready(StandInScorer())
    else:
        try:
            device = resolve_device(args.device)
        except DeviceRefused as err:
            print(f"HPS service: {err}", file=sys.stderr)
            return 2
        home = default_hf_home(os.environ)
        if home:
            os.environ["HF_HOME"] = home
            print(f"HPS service: HF_HOME={home} (persistent storage)", flush=True)
        slot = ScorerSlot(lambda: HPSv3Scorer(device), "hpsv3", device)
    server = make_server(slot, args.host, args.port)
    if slot.status == "loading":
        slot.start()
    host, port = server.server_address[:2]
    print(f"HPS service ({slot.name} on {slot.device}, {slot.status}) at "
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
