"""GPU checks of the training program (needs a CUDA GPU with bf16; not runnable on a CPU).

(a) Qwen3.5-4B's architecture (the shipped config) with random weights in bf16 on the GPU,
    LoRA all-linear, gradient checkpointing: the time of one GRPO step of 8 generations,
    split into generation and the rest. The reward is a **non-rendering stand-in** (the
    completion's length, labelled ``stand-in`` in the JSON): Chromium is not on the GPU
    machine, and rendering is measured by ``train_bench.py``. A random model never stops by
    itself, so every generation runs to ``--completion-tokens``.
(b) Qwen3.5-35B-A3B's architecture the same way (LoRA all-linear, gradient checkpointing,
    random bf16 weights): the peak GPU memory of one forward + backward at
    ``--sequence-tokens`` (8,192 by default), beside the estimate of
    :func:`watercolour.train.plan.memory_estimate`.

    python benchmarks/train_gpu_check.py [--completion-tokens 1024] [--skip-35b]

Writes ``benchmarks/results/train-gpu-<date>.json``. One short script, by design: a device
session is 15 minutes in all.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def _random_model(name: str):
    import torch
    from transformers import AutoModelForCausalLM

    from watercolour.train.architectures import architecture_config

    config = architecture_config(name)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    return model, config


def grpo_step_4b(completion_tokens: int, work: Path) -> dict:
    import torch
    from datasets import Dataset
    from peft import LoraConfig

    from watercolour.prompt import messages
    from watercolour.train.config import TrainArguments
    from watercolour.train.tiny import build_placeholder_tokenizer as build_tokenizer
    from watercolour.train.trainer import WatercolourGRPOTrainer

    model, _ = _random_model("Qwen/Qwen3.5-4B")
    tokenizer = build_tokenizer()  # ids < 512 are valid ids of the 248,320-token vocabulary

    def stand_in_length_reward(completions, **kwargs):
        """Stand-in (no rendering): the completion's length in characters / 1000."""
        return [len(str(c)) / 1000 for c in completions]

    args = TrainArguments(output_dir=str(work / "4b"), max_steps=1, num_generations=8,
                          per_device_train_batch_size=1, gradient_accumulation_steps=8,
                          max_completion_length=completion_tokens, bf16=True,
                          gradient_checkpointing=True, save_strategy="no", report_to="none",
                          learning_rate=5e-5, top_p=0.95, top_k=20)
    data = Dataset.from_list([{"prompt": messages()}] * 8)
    trainer = WatercolourGRPOTrainer(
        model=model, reward_funcs=[stand_in_length_reward], args=args, train_dataset=data,
        processing_class=tokenizer,
        peft_config=LoraConfig(r=16, lora_alpha=32, target_modules="all-linear",
                               task_type="CAUSAL_LM"))
    torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    trainer.train()
    total = time.perf_counter() - started
    logged = next(h for h in trainer.state.log_history if "step_time" in h)
    result = {"reward": "stand-in: completion length / 1000 (no rendering)",
              "completion_tokens": completion_tokens, "generations": 8,
              "step_s": round(float(logged["step_time"]), 2),
              "generation_s": round(float(logged.get("time/generation_s", 0.0)), 2),
              "train_call_s": round(total, 2),
              "peak_gib": round(torch.cuda.max_memory_allocated() / 1024**3, 2)}
    result["update_s"] = round(result["step_s"] - result["generation_s"], 2)
    del trainer, model
    gc.collect()
    torch.cuda.empty_cache()
    return result


def peak_35b(sequence_tokens: int) -> dict:
    import torch
    from peft import LoraConfig, get_peft_model

    from watercolour.train.plan import memory_estimate

    model, config = _random_model("Qwen/Qwen3.5-35B-A3B")
    total = sum(p.numel() for p in model.parameters())
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear",
                                             task_type="CAUSAL_LM"))
    model.gradient_checkpointing_enable()
    model.enable_input_require_grads()
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    ids = torch.randint(0, 512, (1, sequence_tokens), device="cuda")
    torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    estimate = memory_estimate(config, trainable, total_params=total,
                               completion_tokens=sequence_tokens, prompt_tokens=0,
                               generations=1).to_dict()
    return {"sequence_tokens": sequence_tokens, "forward_backward_s": round(seconds, 2),
            "peak_gib": round(torch.cuda.max_memory_allocated() / 1024**3, 2),
            "trainable_params": trainable, "total_params": total, "estimate": estimate}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--completion-tokens", type=int, default=1024)
    parser.add_argument("--sequence-tokens", type=int, default=8192)
    parser.add_argument("--skip-35b", action="store_true")
    parser.add_argument("--skip-4b", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    import torch

    if not torch.cuda.is_available():
        print("train_gpu_check: error: no CUDA GPU here", file=sys.stderr)
        return 2
    data: dict = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                  "gpu": torch.cuda.get_device_name(0),
                  "gpu_gib": round(torch.cuda.get_device_properties(0).total_memory / 1024**3,
                                   1)}
    with tempfile.TemporaryDirectory() as work:
        if not args.skip_4b:
            data["grpo_step_4b"] = grpo_step_4b(args.completion_tokens, Path(work))
            print(json.dumps(data["grpo_step_4b"]))
        if not args.skip_35b:
            data["peak_35b"] = peak_35b(args.sequence_tokens)
            print(json.dumps({k: v for k, v in data["peak_35b"].items() if k != "estimate"}))
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"train-gpu-{dt.datetime.now():%Y%m%d-%H%M%S}.json"
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
