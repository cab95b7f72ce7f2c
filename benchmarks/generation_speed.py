"""How fast a policy generates on this machine, by weight dtype and batch size: what a GRPO
step's generation (63-66% of a SmolLM2 step here, issue 41) could save.

    python benchmarks/generation_speed.py      # SmolLM2-135M-Instruct, float32 and bfloat16

Each condition samples one batch of identical short-prompt chats (the GRPO recipe's prompt) for
exactly ``--tokens`` new tokens (``min_new_tokens`` holds EOS off, so every condition does the
same work) at temperature 0.8, after one warm-up batch, and reports tokens a second. Writes
``benchmarks/results/generation-speed.json`` with the machine's load.
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from watercolour.flags import SEED, flag, parser_for
from watercolour.io import write_json_atomic
from watercolour.notebooks import shown_path

RESULTS = Path(__file__).resolve().parent / "results"


@dataclass
class GenerationSpeedBench:
    """What the benchmark samples."""

    policy: str = flag(default="builtin:smollm2-135m-instruct", help="the policy")
    dtypes: list[str] = flag(nargs="+", default=["float32", "bfloat16"],
                             choices=("float32", "bfloat16"), help="weight dtypes to compare")
    batches: list[int] = flag(nargs="+", type=int, default=[4, 6],
                              help="batch sizes to compare (a GRPO group is one batch)")
    tokens: int = flag(type=int, default=192, help="new tokens each reply is made to have")
    seed: int = flag(like=SEED)
    results: Path = flag(type=Path, default=RESULTS / "generation-speed.json",
                         help="where the JSON goes")


def sample_once(model: Any, inputs: Any, tokens: int, seed: int) -> float:
    """Seconds to sample ``tokens`` new tokens for every row of ``inputs``."""
    import torch

    torch.manual_seed(seed)
    started = time.perf_counter()
    with torch.no_grad():
        out = model.generate(**inputs, do_sample=True, temperature=0.8, top_p=0.95,
                             max_new_tokens=tokens, min_new_tokens=tokens)
    seconds = time.perf_counter() - started
    made = out.shape[1] - inputs["input_ids"].shape[1]
    if made != tokens:
        raise RuntimeError(f"generated {made} tokens, asked for {tokens}")
    return seconds


def measure(bench: GenerationSpeedBench) -> list[dict[str, Any]]:
    """Tokens a second for every dtype and batch size."""
    import torch

    from watercolour.train.evaluate import Sampling, load_policy, resolve_policy

    model, tokenizer = load_policy(resolve_policy(bench.policy))
    chat = Sampling(prompt="short").chat()
    prompt = tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    rows = []
    for dtype in bench.dtypes:
        model = model.to(getattr(torch, dtype))
        for batch in bench.batches:
            inputs = tokenizer([prompt] * batch, return_tensors="pt", add_special_tokens=False)
            sample_once(model, inputs, 8, bench.seed)  # warm-up
            seconds = sample_once(model, inputs, bench.tokens, bench.seed)
            rows.append({"dtype": dtype, "batch": batch, "tokens": bench.tokens,
                         "seconds": round(seconds, 2),
                         "tokens_per_s": round(batch * bench.tokens / seconds, 1),
                         "ms_per_decode_step": round(1000 * seconds / bench.tokens, 1)})
            print(f"{dtype} batch {batch}: {rows[-1]['tokens_per_s']} tokens/s "
                  f"({rows[-1]['ms_per_decode_step']} ms a step)", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    """Measure and write the JSON."""
    import torch

    args = parser_for(GenerationSpeedBench,
                      description=__doc__.split("\n\n")[0]).parse_args(argv)
    bench = GenerationSpeedBench(**vars(args))
    if bench.tokens < 1 or min(bench.batches) < 1:
        raise SystemExit("--tokens and every --batches must be at least 1")
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    load_start = os.getloadavg()
    rows = measure(bench)
    out = {"benchmark": "generation-speed",
           "options": {k: shown_path(v) if isinstance(v, Path) else v
                       for k, v in asdict(bench).items()},
           "conditions": rows, "torch": torch.__version__,
           "machine": {"cpus": os.cpu_count(), "threads": torch.get_num_threads(),
                       "python": platform.python_version(),
                       "loadavg_start": [round(x, 2) for x in load_start],
                       "loadavg_end": [round(x, 2) for x in os.getloadavg()]}}
    write_json_atomic(bench.results, out)
    print(json.dumps({"results": shown_path(bench.results)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
