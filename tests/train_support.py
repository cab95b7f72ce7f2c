"""Shared by the training tests: a tiny Qwen3 imprinted with one short sketch (built here,
no download), and the arguments of a small run."""

from __future__ import annotations

from pathlib import Path

from watercolour.prompt import user_prompt

REPLY = ("```javascript\nfunction setup() {\n  createCanvas(256, 256, WEBGL);\n"
         "  background('#f6f0e4');\n  brush.fill('#ee9a72', 170);\n"
         "  brush.circle(0, 0, 60);\n}\n```")
"""A short reply the gate admits (one filled circle)."""
SHORT_PROMPT = [{"role": "user", "content": user_prompt()}]


def imprinted_model(folder: Path) -> Path:
    """The builtin tiny Qwen3, trained for a few seconds to answer with :data:`REPLY`."""
    from watercolour.models.tiny import build_tiny_qwen3

    return build_tiny_qwen3(folder, seed=0, imprint_reply=REPLY, imprint_steps=150,
                            prompt=SHORT_PROMPT)


def small_run(model: Path, out: Path, *extra: str) -> list[str]:
    """Flags of a 2-step run: one group of 4 a step, short completions, hps-only."""
    return ["--model", str(model), "--prompt", "short", "--mix", "hps-only", "--steps", "2",
            "--num-generations", "4", "--per-device-batch-size", "4",
            "--gradient-accumulation-steps", "1", "--max-completion-length", "96",
            "--temperature", "1.3", "--out", str(out), "--save-steps", "1", "--lr", "1e-4",
            "--n-episodes", "4", "--seed", "0", *extra]


class LengthRewarder:
    """A stand-in reward source for runs of random-weight models (whose replies the gate would
    reject, every reward 0 and no gradient): each reply's length in characters / 100, capped at
    1, as every component. Nothing rendered, nothing judged; an ``ok`` record a run logs like
    any other."""

    def __init__(self, config) -> None:
        self.config = config
        self.mix = config.mix
        self.calls = 0

    def evaluate_group(self, replies, subject=None, seed=None, render_seed=None):
        from watercolour.rewards import Evaluation
        from watercolour.rewards.rubric import NAMES

        self.calls += 1
        out = []
        for reply in replies:
            score = min(1.0, len(reply) / 100)
            out.append(Evaluation.from_dict({
                "reward": score, "status": "ok", "seed": seed, "subject": subject,
                "stand_in": "length / 100", "components": {c: {"raw": score} for c in NAMES},
                "gate": {"violations": []}, "latency_s": {}}))
        return out


def painted_png() -> bytes:
    """A small render: a terracotta block on paper (a vision turn's picture)."""
    import io

    from PIL import Image

    image = Image.new("RGB", (64, 64), (250, 246, 238))
    for x in range(16, 48):
        for y in range(20, 44):
            image.putpixel((x, y), (222, 120, 96))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
