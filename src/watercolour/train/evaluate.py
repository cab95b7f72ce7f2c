"""The before/after probe of a policy: sample replies with fixed seeds, score them with the
reward a run uses (gate, length, judge, scorer under a mix), and summarise: the gate-pass
rate, why the gate rejected, the reward's mean and spread, and a contact sheet.

A policy is a name of :data:`watercolour.models.registry.MODELS` (a builtin), a Hub id, a
local model folder, or an adapter folder (PEFT's ``adapter_config.json``, as a run's
``final/`` with ``--lora``) loaded over its base: the registry resolves and loads it
(:func:`watercolour.models.registry.resolve_policy`, ``load_policy``).

    watercolour evaluate builtin:smollm2-135m-instruct --samples 8 --json
    watercolour evaluate runs/tiny/final --recipe tiny-cpu --samples 32 --out eval.json

Seeds: batch ``b`` (of ``batch`` replies, from sample ``start``) samples with
``torch.manual_seed(seed + start)``; group ``g`` (of ``group`` replies) draws its references and
renders with seed ``seed + g``. The same arguments give the same replies and scores.
"""

from __future__ import annotations

import collections
import io
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from watercolour.errors import InputError
from watercolour.models.registry import Policy, load_policy, resolve_policy
from watercolour.prompt import DEFAULT_SUBJECT, messages, user_prompt

PROMPTS = ("full", "short")
GROUP = 8
"""Consecutive samples that share one draw of references."""


@dataclass
class Sampling:
    """How replies are sampled (all of it is recorded with the results)."""

    samples: int = 8
    seed: int = 0
    subject: str = DEFAULT_SUBJECT
    max_new_tokens: int = 512
    temperature: float = 1.0
    top_p: float = 1.0
    prompt: str = "full"
    """full: the system prompt + the request (as the trainer's default); short: the request."""
    batch: int = 8
    stop_at_fence: bool = True
    """Stop each reply at the closing fence of its code block, as training does
    (:data:`watercolour.train.generation.FENCE_STOPS`), as well as at EOS."""

    def __post_init__(self) -> None:
        if self.samples < 1 or self.batch < 1 or self.max_new_tokens < 1:
            raise InputError("--samples, the batch and --max-new-tokens must be at least 1")
        if self.temperature < 0 or not 0 < self.top_p <= 1:
            raise InputError("--temperature must be >= 0 and --top-p in (0, 1]")
        if self.prompt not in PROMPTS:
            raise InputError(f"--prompt must be full or short, got {self.prompt!r}")

    def chat(self) -> list[dict[str, str]]:
        """The chat messages the policy answers."""
        if self.prompt == "short":
            return [{"role": "user", "content": user_prompt(self.subject)}]
        return messages(self.subject)


def rejection_reasons(violation_lists: Iterable[Sequence[str] | None]) -> dict[str, int]:
    """How often each violation was the first of a rejected rollout, most common first."""
    counts = collections.Counter(str(vs[0]).split(":")[0] for vs in violation_lists
                                 if vs is not None and len(vs))
    return dict(counts.most_common())


def all_violations(violation_lists: Iterable[Sequence[str] | None]) -> dict[str, int]:
    """How many rejected rollouts had each violation (any of theirs), most common first."""
    counts: collections.Counter[str] = collections.Counter()
    for vs in violation_lists:
        counts.update({str(v).split(":")[0] for v in vs or ()})
    return dict(counts.most_common())


def sample_replies(model: Any, tokenizer: Any, sampling: Sampling) -> list[str]:
    """``sampling.samples`` replies (seeded: the same every time)."""
    return sample_chats(model, tokenizer, [sampling.chat()] * sampling.samples, sampling)


def sample_chats(model: Any, tokenizer: Any, chats: Sequence[list[dict[str, Any]]],
                 sampling: Sampling) -> list[str]:
    """One sampled reply to each chat, in batches of ``sampling.batch`` (left-padded, with the
    end-of-sequence token where the tokenizer has no pad token; the batch from sample ``start``
    seeded with ``sampling.seed + start``), each ending at EOS or, with
    ``sampling.stop_at_fence``, at the closing fence of its code block."""
    import torch

    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    texts = [tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
             for chat in chats]
    knobs = {"do_sample": False} if sampling.temperature == 0 else {
        "do_sample": True, "temperature": sampling.temperature, "top_p": sampling.top_p,
        "top_k": 0}
    if sampling.stop_at_fence:
        from watercolour.train.generation import stop_kwargs

        knobs.update(stop_kwargs("transformers"), tokenizer=tokenizer)
    replies: list[str] = []
    for start in range(0, len(texts), sampling.batch):
        torch.manual_seed(sampling.seed + start)
        inputs = tokenizer(texts[start:start + sampling.batch], return_tensors="pt",
                           padding=True, add_special_tokens=False)
        with torch.no_grad():
            out = model.generate(**inputs, **knobs, max_new_tokens=sampling.max_new_tokens,
                                 eos_token_id=tokenizer.eos_token_id,
                                 pad_token_id=tokenizer.pad_token_id)
        replies += tokenizer.batch_decode(out[:, inputs["input_ids"].shape[1]:],
                                          skip_special_tokens=True)
    return replies


# ---------------------------------------------------------------- scoring


def score_replies(replies: Sequence[str], rewarder: Any, subject: str, seed: int = 0,
                  group: int = GROUP, known: set[str] | None = None, love: int | None = None
                  ) -> tuple[list[dict[str, Any]], list[bytes | None]]:
    """One row per reply (status, reward, violations, ...) and its render (PNG or None);
    group ``g`` draws its references with seed ``seed + g``, ``love`` of them from the
    ``love`` tier (default half)."""
    known = known if known is not None else set()
    rows: list[dict[str, Any]] = []
    pngs: list[bytes | None] = []
    for g in range(0, len(replies), group):
        chunk = replies[g:g + group]
        for reply, ev in zip(chunk, rewarder.evaluate_group(chunk, subject=subject,
                                                            seed=seed + g // group,
                                                            love=love)):
            verdict = ev.verdict
            rows.append({"status": ev.status, "reward": ev.reward,
                         "violations": list(verdict.violations) if verdict else [],
                         "tokens_chars": len(reply),
                         "copy_of_training_sketch": reply.strip() in known})
            render = verdict.render if verdict is not None else None
            pngs.append(ev.png or (render.png if render is not None else None))
    return rows, pngs


def spread(values: Sequence[float]) -> dict[str, float | None]:
    """Mean, standard deviation (population), min and max, rounded; Nones when empty."""
    if not values:
        return {"mean": None, "std": None, "min": None, "max": None}
    return {"mean": round(statistics.fmean(values), 4),
            "std": round(statistics.pstdev(values), 4),
            "min": round(min(values), 4), "max": round(max(values), 4)}


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Gate-pass rate, rejection reasons, the reward's mean and spread."""
    n = len(rows)
    passed = [r for r in rows if r["status"] == "ok"]
    rejected = [r["violations"] for r in rows if r["status"] == "rejected"]
    rewards = [r["reward"] for r in rows if r["reward"] is not None]
    of_passed = [r["reward"] for r in passed if r["reward"] is not None]
    return {
        "passed": len(passed), "pass_rate": round(len(passed) / n, 4) if n else None,
        "rejection_reasons": rejection_reasons(rejected),
        "violations": all_violations(rejected),
        "unavailable": sum(r["status"] == "unavailable" for r in rows),
        "mean_reward": spread(rewards)["mean"],
        "reward": spread(rewards),
        "mean_reward_of_passed": spread(of_passed)["mean"],
        "reward_of_passed": spread(of_passed),
    }


def contact_sheet(rows: Sequence[dict[str, Any]], pngs: Sequence[bytes | None],
                  columns: int = 8, size: int = 128) -> bytes:
    """Every sample in order, a tile each: its render with the reward, or a grey tile with its
    status and first violation (a PNG)."""
    from PIL import Image, ImageDraw

    columns = max(1, min(columns, len(rows)))
    lines = -(-len(rows) // columns)
    sheet = Image.new("RGB", (columns * size, lines * size), "white")
    draw = ImageDraw.Draw(sheet)
    for i, (row, png) in enumerate(zip(rows, pngs)):
        x, y = (i % columns) * size, (i // columns) * size
        if png is not None:
            sheet.paste(Image.open(io.BytesIO(png)).convert("RGB").resize((size, size)), (x, y))
        else:
            draw.rectangle((x + 1, y + 1, x + size - 2, y + size - 2), fill=(224, 224, 224))
        reward = "-" if row["reward"] is None else f"{row['reward']:.2f}"
        label = f"#{i} {row['status']} {reward}"
        if row["status"] != "ok" and row["violations"]:
            label += "\n" + str(row["violations"][0]).split(":")[0]
        draw.text((x + 4, y + 4), label, fill="black")
    buffer = io.BytesIO()
    sheet.save(buffer, format="PNG")
    return buffer.getvalue()


def evaluate(policy: str | Policy, rewarder: Any, sampling: Sampling, group: int = GROUP,
             known: set[str] | None = None, sheet: str | Path | None = None,
             model: Any = None, tokenizer: Any = None, love: int | None = None
             ) -> dict[str, Any]:
    """Sample the policy, score the replies, summarise; the sheet to ``sheet`` when given.
    ``model`` and ``tokenizer`` (already loaded) skip loading ``policy``; ``love`` of each
    group's references come from the ``love`` tier (default half)."""
    from watercolour.io import write_bytes_atomic

    started = time.perf_counter()
    policy = policy if isinstance(policy, Policy) else resolve_policy(policy)
    if model is None or tokenizer is None:
        model, tokenizer = load_policy(policy)
    loaded_s = time.perf_counter() - started
    replies = sample_replies(model, tokenizer, sampling)
    sampled_s = time.perf_counter() - started - loaded_s
    rows, pngs = score_replies(replies, rewarder, sampling.subject, sampling.seed, group, known,
                               love)
    for row, reply in zip(rows, replies):
        row["reply"] = reply
    if sheet is not None:
        write_bytes_atomic(sheet, contact_sheet(rows, pngs))
    return {
        "policy": policy.name, "model": policy.model, "adapter": policy.adapter,
        **asdict(sampling), "group": group, "love_references": love,
        "gate_mode": rewarder.config.gate_mode, "mix": rewarder.config.mix.name,
        **summarise(rows),
        "copies_of_training_sketches": sum(r["copy_of_training_sketch"] for r in rows),
        "load_s": round(loaded_s, 1), "sampling_s": round(sampled_s, 1),
        "seconds": round(time.perf_counter() - started, 1),
        "sheet": str(sheet) if sheet is not None else None,
        "rows": rows,
    }


# ---------------------------------------------------------------- set-up


def recipe_sampling(recipe: str) -> dict[str, Any]:
    """What a training recipe says about sampling and scoring: temperature, top-p, completion
    length, prompt, subject, mix (None where it says nothing), gate mode (where it says
    nothing: ``WATERCOLOUR_GATE_MODE``, else library)."""
    from watercolour.train.config import parse_args

    run, training = parse_args(["--config", recipe])
    return {"temperature": float(training.temperature), "top_p": float(training.top_p),
            "max_new_tokens": int(training.max_completion_length or 512),
            "prompt": run.prompt, "subject": run.subject, "mix": run.mix,
            "gate_mode": run.gate_mode}


def reward_config(mix: str | None = None, pool: str | None = None,
                  gate_mode: str | None = None) -> tuple[Any, str | None]:
    """The reward configuration, and a note when the mix was changed: with no ``mix`` given
    and no pool found, a mix that needs the judge becomes ``hps-only`` (the scorer needs no
    pool), so a fresh checkout can evaluate."""
    from watercolour.pool.schema import DEFAULT_POOL
    from watercolour.rewards import Mix, RewardConfig

    config = RewardConfig.from_env(mix=Mix.parse(mix) if mix else None, pool=pool,
                                   gate_mode=gate_mode)
    if mix is None and config.mix.needs("judge") and config.pool_source() is None:
        note = (f"no pool (WATERCOLOUR_POOL, --pool, {DEFAULT_POOL}): the {config.mix.name} mix "
                "needs the judge's references, so scoring with hps-only")
        config = RewardConfig.from_env(mix=Mix.preset("hps-only"), pool=pool,
                                       gate_mode=gate_mode)
        return config, note
    return config, None
