"""The GPU check of the fast path (issue 42): Qwen3.5's decode with transformers' fallback
(PyTorch reference) kernels against flash-linear-attention's (fla), on one lent GPU.

For Qwen3.5-4B, then Qwen3.5-35B-A3B if the budget allows (``--budget-s``, default 420 s:
the check is meant to finish inside 8 minutes of device time, start-up aside):

- the full-size model built with **random bf16 weights** from the shipped ``config.json``
  (``src/watercolour/models/architectures/``, read by path: nothing of ``watercolour`` is
  imported on the GPU, so TRL need not be there), as the class TRL loads for it;
- for each context (``--contexts``, default 700 and 2,500 tokens: a prompt, and a prompt with
  a long sketch) and each kernel path (``reference``: transformers' PyTorch fallback;
  ``fla``: fla's kernels, when transformers picked them at import): a prefill of ``--batch``
  (8) sequences, then ``--steps`` timed decode steps after ``--warmup`` untimed ones, every
  step fed the same drawn tokens, so the two paths see the same input;
- fla's logits checked against the fallback's (:func:`compare`: the largest absolute
  difference, the reference's own scale, the share of positions whose top token agrees), at
  the prefill's last position and at the last decode step;
- one forward+backward through LoRA (all-linear, r 16, the vision tower excluded, as the
  recipes have it) on the fla path, or the refusal it hits, recorded (fla's backward refuses
  Hopper with Triton < 3.7.1; the GPU machine's torch 2.11 ships Triton 3.6).

Only the two gated-delta functions change between the paths
(``torch_chunk_gated_delta_rule``, ``torch_recurrent_gated_delta_rule``, swapped in the
modeling modules: :func:`use_path`); ``causal-conv1d`` builds from source only, so both paths
run its reference code, recorded as such. The JSON is rewritten after each stage, so a check
cut short keeps what it measured: ``benchmarks/results/decode-check-<date>.json``.

    python benchmarks/decode_check.py             # the GPU check (CUDA, bf16)
    python benchmarks/decode_check.py --dry-run   # what it would build (meta device)
    python benchmarks/decode_check.py --tiny --out /tmp/x   # CPU: the miniatures, fp32

On the GPU machine (no network; torch 2.11, an older transformers and peft, no TRL): carry
the wheels. Here, in the repository root, once:

    mkdir -p .git/info && echo /.whl/ >> .git/info/exclude
    python -m pip download --no-deps -c constraints.txt --only-binary=:all: \\
        --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \\
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \\
        fla-core flash-linear-attention einops transformers peft

(about 15 MiB: transformers 5.24.0, peft 0.21.2, fla-core and flash-linear-attention 0.6.0,
einops). Then the device tool's ``run`` with ``carry: [".whl"]``, ``kind: nvidia-h200`` (the
35B's 65 GiB of weights and its caches are tight on an H100) and ``timeout_s: 540``:

    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \\
        --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit; \\
    PYTHONUNBUFFERED=1 python3 benchmarks/decode_check.py --out $OUT --budget-s 420

and copy the JSON it wrote under ``$OUT`` into ``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gc
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
ARCHITECTURES = ROOT / "src" / "watercolour" / "models" / "architectures"
MODELS: dict[str, tuple[str, str, str]] = {
    "4b": ("Qwen/Qwen3.5-4B", "Qwen3.5-4B", "builtin:mini-qwen3.5"),
    "35b": ("Qwen/Qwen3.5-35B-A3B", "Qwen3.5-35B-A3B", "builtin:mini-qwen3.5-moe"),
}
"""Key -> (the Hub id, its shipped config's folder, its CPU miniature), in the order run."""
MODULES = ("transformers.models.qwen3_5.modeling_qwen3_5",
           "transformers.models.qwen3_5_moe.modeling_qwen3_5_moe")
"""The modeling modules whose gated-delta functions :func:`use_path` swaps."""
KERNELS = ("torch_chunk_gated_delta_rule", "torch_recurrent_gated_delta_rule")
"""The functions that differ between the paths: the chunked one (prefill, training) and the
recurrent one (a decode step)."""
TINY = {"contexts": (24, 40), "steps": 3, "warmup": 1, "batch": 2}
"""``--tiny``'s defaults: a CPU rehearsal in seconds."""
GPU = {"contexts": (700, 2500), "steps": 16, "warmup": 3, "batch": 8}
"""The GPU check's defaults."""
MIN_MODEL_S = 150.0
"""A model is skipped when less of the budget than this is left."""
LORA = {"r": 16, "lora_alpha": 32, "lora_dropout": 0.0, "target_modules": "all-linear",
        "exclude_modules": r".*visual.*"}
"""The recipes' LoRA (``watercolour.train.trainer.lora_config``), for the forward+backward."""


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The check's arguments; unset sizes take :data:`TINY`'s or :data:`GPU`'s value."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(MODELS), action="append",
                        help="run this model only (repeatable; default both, 4B first)")
    parser.add_argument("--contexts", type=lambda s: tuple(int(x) for x in s.split(",")),
                        help="prefill lengths, comma-separated (default 700,2500)")
    parser.add_argument("--batch", type=int, help="sequences decoded together (default 8)")
    parser.add_argument("--steps", type=int, help="timed decode steps (default 16)")
    parser.add_argument("--warmup", type=int, help="untimed decode steps first (default 3)")
    parser.add_argument("--paths", default="reference,fla",
                        help="kernel paths to time, comma-separated (default reference,fla)")
    parser.add_argument("--no-backward", action="store_true",
                        help="skip the forward+backward")
    parser.add_argument("--budget-s", type=float, default=420.0,
                        help="the whole check's time; later stages and models are skipped "
                             "as it runs out (default 420)")
    parser.add_argument("--tiny", action="store_true",
                        help="CPU: the miniatures in fp32 through the same code")
    parser.add_argument("--dry-run", action="store_true",
                        help="what would be built (meta device, no weights)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    for name, value in (TINY if args.tiny else GPU).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.keys = [k for k in MODELS if k in (args.only or MODELS)]
    args.paths = tuple(p.strip() for p in args.paths.split(",") if p.strip())
    return args


def load_config(key: str, tiny: bool) -> Any:
    """The model's config: the shipped ``config.json`` read by path, or the miniature's."""
    if tiny:
        from watercolour.models.miniature import miniature_config

        return miniature_config(MODELS[key][2])
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(str(ARCHITECTURES / MODELS[key][1]))


def build(config: Any, dtype: str, device: str) -> Any:
    """The class TRL loads for ``config`` (the one its ``architectures`` names) with random
    weights in ``dtype``, built on ``device`` (``meta``: shapes only)."""
    import torch
    import transformers

    cls = getattr(transformers, config.architectures[0])
    torch.manual_seed(0)
    with torch.device(device):
        return cls._from_config(config, dtype=getattr(torch, dtype))


def _picked(function: Callable) -> str:
    """Which implementation transformers' wrapper around ``function`` picked at import:
    ``fla`` or ``reference``."""
    cells = dict(zip(function.__code__.co_freevars,
                     (c.cell_contents for c in function.__closure__ or ())))
    return "fla" if cells.get("is_new_implementation") else "reference"


def path_functions() -> dict[str, dict[tuple[str, str], Callable]]:
    """Each available kernel path's gated-delta functions, by (module, name): ``reference``
    (transformers' PyTorch code, the wrapped function) always, ``fla`` when transformers
    picked fla's kernels at import (fla importable)."""
    import importlib

    reference, fast = {}, {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in KERNELS:
            function = getattr(module, name)
            reference[(module_name, name)] = getattr(function, "__wrapped__", function)
            if _picked(function) == "fla":
                fast[(module_name, name)] = function
    return {"reference": reference, **({"fla": fast} if fast else {})}


@contextlib.contextmanager
def use_path(functions: dict[tuple[str, str], Callable]) -> Iterator[None]:
    """Inside: the modeling modules call ``functions`` (looked up at call time); after: what
    they had."""
    import importlib

    saved = {}
    try:
        for (module_name, name), function in functions.items():
            module = importlib.import_module(module_name)
            saved[(module_name, name)] = getattr(module, name)
            setattr(module, name, function)
        yield
    finally:
        for (module_name, name), function in saved.items():
            setattr(importlib.import_module(module_name), name, function)


def compare(reference: Any, other: Any) -> dict[str, float]:
    """``other``'s logits against ``reference``'s (same shape, last axis the vocabulary): the
    largest absolute difference, the reference's largest absolute value (the scale), and the
    share of positions whose top token is the same."""
    ref, oth = reference.float(), other.float()
    if ref.shape != other.shape:
        raise ValueError(f"shapes differ: {tuple(ref.shape)} vs {tuple(other.shape)}")
    return {"max_abs_diff": round(float((ref - oth).abs().max()), 6),
            "max_abs_reference": round(float(ref.abs().max()), 6),
            "top_token_agreement": round(float(
                (ref.argmax(-1) == oth.argmax(-1)).float().mean()), 4)}


def decode_timing(model: Any, tokens: Any, *, steps: int, warmup: int) -> dict[str, Any]:
    """A prefill of ``tokens[:, :-(warmup + steps)]`` then one decode step per remaining
    column (the drawn tokens fed, not the model's picks: every path sees the same input); the
    first ``warmup`` steps untimed. The timings and the logits compared across paths."""
    import torch

    cuda = tokens.is_cuda
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    context = tokens.shape[1] - warmup - steps
    times = []
    with torch.inference_mode():
        sync()
        started = time.perf_counter()
        out = model(input_ids=tokens[:, :context], use_cache=True, logits_to_keep=1)
        sync()
        prefill_s = time.perf_counter() - started
        prefill_logits, cache = out.logits[:, -1].float().cpu(), out.past_key_values
        for i in range(warmup + steps):
            started = time.perf_counter()
            out = model(input_ids=tokens[:, context + i: context + i + 1], cache=cache,
                        use_cache=True)
            sync()
            if i >= warmup:
                times.append(time.perf_counter() - started)
            cache = out.past_key_values
    times.sort()
    return {"context": context, "batch": tokens.shape[0], "prefill_s": round(prefill_s, 3),
            "decode_ms": round(1000 * sum(times) / len(times), 2),
            "decode_ms_median": round(1000 * times[len(times) // 2], 2),
            "tokens_per_s": round(tokens.shape[0] * len(times) / sum(times), 1),
            "cache_tokens": int(cache.get_seq_length()),
            "logits": {"prefill": prefill_logits, "decode": out.logits[:, -1].float().cpu()}}


def forward_backward(model: Any, tokens: Any) -> dict[str, Any]:
    """One forward+backward of ``tokens`` through LoRA (:data:`LORA`) on ``model`` (changed
    in place: call it last): its time, or the error it hits, recorded."""
    import torch
    from peft import LoraConfig, get_peft_model

    cuda = tokens.is_cuda
    try:
        peft_model = get_peft_model(model, LoraConfig(**LORA))
        peft_model.train()
        started = time.perf_counter()
        out = peft_model(input_ids=tokens, logits_to_keep=64)
        loss = out.logits.float().logsumexp(-1).mean()
        loss.backward()
        if cuda:
            torch.cuda.synchronize()
        grads = [p.grad for p in peft_model.parameters() if p.requires_grad]
        return {"ok": True, "tokens": list(tokens.shape), "s": round(time.perf_counter()
                                                                     - started, 3),
                "loss": round(float(loss.detach()), 4),
                "lora_grads_finite": all(g is not None and bool(torch.isfinite(g).all())
                                         for g in grads)}
    except Exception as err:  # the refusal is a result
        return {"ok": False, "tokens": list(tokens.shape),
                "error": f"{type(err).__name__}: {err}"[:1000]}


def plan(key: str, args: argparse.Namespace) -> dict[str, Any]:
    """What the check builds for ``key`` (on the meta device): the class, the parameters, the
    linear-attention layers, the tokens a context's run draws."""
    config = load_config(key, args.tiny)
    model = build(config, "float32" if args.tiny else "bfloat16", "meta")
    text = getattr(config, "text_config", config)
    layers = list(getattr(text, "layer_types", []))
    return {"model": MODELS[key][0] if not args.tiny else MODELS[key][2],
            "model_class": type(model).__name__,
            "total_params": sum(p.numel() for p in model.parameters()),
            "linear_attention_layers": layers.count("linear_attention"),
            "layers": len(layers), "batch": args.batch, "contexts": list(args.contexts),
            "steps": args.steps, "warmup": args.warmup}


def check_model(key: str, args: argparse.Namespace, deadline: float,
                record: dict[str, Any], save: Callable[[], None],
                paths: dict[str, dict[tuple[str, str], Callable]] | None = None) -> None:
    """Every stage of the check for ``key``, into ``record`` (``save`` after each): decode per
    context and path, the comparison, the forward+backward; a stage is skipped (said so) once
    the ``deadline`` (``time.perf_counter()``) has passed."""
    import torch

    paths = paths if paths is not None else path_functions()
    cuda = torch.cuda.is_available() and not args.tiny
    device = "cuda" if cuda else "cpu"
    record.update(plan(key, args))
    record["paths_available"] = sorted(paths)
    started = time.perf_counter()
    model = build(load_config(key, args.tiny), "float32" if args.tiny else "bfloat16",
                  device).eval()
    record["build_s"] = round(time.perf_counter() - started, 1)
    vocab = model.config.get_text_config().vocab_size
    generator = torch.Generator().manual_seed(0)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    record["decode"], record["skipped"] = [], []
    for context in args.contexts:
        tokens = torch.randint(0, vocab, (args.batch, context + args.warmup + args.steps),
                               generator=generator).to(device)
        logits = {}
        for name in args.paths:
            if name not in paths:
                record["skipped"].append(f"{name} at {context}: not installed")
                continue
            if time.perf_counter() > deadline:
                record["skipped"].append(f"{name} at {context}: budget spent")
                continue
            try:
                with use_path(paths[name]):
                    timing = decode_timing(model, tokens, steps=args.steps,
                                           warmup=args.warmup)
            except Exception as err:  # an OOM or a kernel's refusal is a result
                record["decode"].append({"path": name, "context": context,
                                         "error": f"{type(err).__name__}: {err}"[:1000]})
                continue
            finally:
                gc.collect()
                if cuda:
                    torch.cuda.empty_cache()
            logits[name] = timing.pop("logits")
            record["decode"].append({"path": name, **timing})
            save()
        if "reference" in logits:
            for name in (n for n in logits if n != "reference"):
                record.setdefault("agreement", []).append({
                    "path": name, "context": context,
                    **{f"{where}": compare(logits["reference"][where], logits[name][where])
                       for where in ("prefill", "decode")}})
        save()
    record["speedup"] = speedups(record["decode"])
    if not args.no_backward:
        if time.perf_counter() > deadline:
            record["skipped"].append("forward+backward: budget spent")
        else:
            name = "fla" if "fla" in paths else "reference"
            tokens = torch.randint(0, vocab, (1, min(args.contexts)),
                                   generator=generator).to(device)
            with use_path(paths[name]):
                record["forward_backward"] = {"path": name, **forward_backward(model, tokens)}
    if cuda:
        record["peak_gib"] = round(torch.cuda.max_memory_allocated() / 1024**3, 2)
    del model
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    save()


def speedups(decode: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per path other than ``reference`` and per context: the reference's decode step time
    over the path's (above 1: faster)."""
    ref = {d["context"]: d["decode_ms"] for d in decode
           if d["path"] == "reference" and "decode_ms" in d}
    out: dict[str, dict[str, float]] = {}
    for d in decode:
        if d["path"] != "reference" and "decode_ms" in d and d["context"] in ref:
            out.setdefault(d["path"], {})[str(d["context"])] = round(
                ref[d["context"]] / d["decode_ms"], 2)
    return out


def environment() -> dict[str, Any]:
    """The versions and the kernel packages the numbers were measured with."""
    from importlib.metadata import PackageNotFoundError, version
    from importlib.util import find_spec

    def of(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    return {"versions": {n: of(n) for n in ("torch", "triton", "transformers", "peft",
                                            "fla-core", "flash-linear-attention", "einops")}
            | {"python": sys.version.split()[0]},
            "kernels_importable": {"fla": find_spec("fla") is not None,
                                   "causal_conv1d": find_spec("causal_conv1d") is not None}}


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.dry_run:
        print(json.dumps({k: plan(k, args) for k in args.keys}, indent=2))
        return 0
    import torch

    if not args.tiny and not torch.cuda.is_available():
        print("decode_check: error: no CUDA GPU here (--tiny rehearses it on the CPU, "
              "--dry-run shows the plan)", file=sys.stderr)
        return 2
    began = time.perf_counter()
    data: dict[str, Any] = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "mode": "tiny (CPU miniatures, fp32)" if args.tiny else "gpu",
        "weights": "random (shipped config.json), bfloat16" if not args.tiny else "random",
        **environment()}
    if torch.cuda.is_available() and not args.tiny:
        data["gpu"] = torch.cuda.get_device_name(0)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "decode-check-tiny" if args.tiny else "decode-check"
    path = args.out / f"{stem}-{dt.datetime.now():%Y%m%d-%H%M%S}.json"

    def save() -> None:
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")

    deadline = began + args.budget_s
    for key in args.keys:
        left = deadline - time.perf_counter()
        if not args.tiny and left < MIN_MODEL_S:
            data[key] = {"not_run": f"{left:.0f} s of --budget-s left"}
            save()
            continue
        data[key] = {}
        try:
            check_model(key, args, deadline, data[key], save)
        except Exception as err:  # recorded, then the next model
            data[key]["error"] = f"{type(err).__name__}: {err}"[:2000]
            gc.collect()
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        data["elapsed_s"] = round(time.perf_counter() - began, 1)
        save()
        print(json.dumps({key: {n: v for n, v in data[key].items()
                                if n in ("speedup", "forward_backward", "skipped", "error",
                                         "not_run", "peak_gib")}}), flush=True)
    print(f"wrote {path.name}")
    return 1 if any("error" in data[k] or "not_run" in data[k] for k in args.keys) else 0


if __name__ == "__main__":
    sys.exit(main())
