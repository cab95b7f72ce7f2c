"""How many tokens the stop at the closing fence saves (issue 42): the same policy sampled with
and without it, the same seeds, and each reply's length in tokens.

    python benchmarks/fence_stop.py            # SmolLM2-135M-Instruct and the tiny painter

Each policy answers the trainer's prompt (the system prompt and the request) ``--samples``
times at ``--temperature``, in batches of 8 (one seed per batch), up to ``--max-new-tokens``,
once without the stop and once with it (:data:`watercolour.train.generation.FENCE_STOPS`, as
training has it on). The sampled tokens are the same in both until a reply stops (transformers
draws for the whole batch at every step, a stopped row too), so each stopped reply is checked
to be a prefix of its unstopped twin. A reply's length is its decoded text encoded again by
the policy's tokenizer (special tokens left out). Writes ``benchmarks/results/fence-stop.json``
with the machine's load. The committed record (2 cores, shared) came from::

    python benchmarks/fence_stop.py --policy builtin:smollm2-135m-instruct

(the tiny painter's replies end at EOS right after their fence, so the stop never fires there:
its committed runs save nothing.)
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
POLICIES = ("builtin:smollm2-135m-instruct", "builtin:tiny-painter")


@dataclass
class FenceStopBench:
    """What the benchmark samples."""

    policy: list[str] = flag(nargs="+", default=list(POLICIES),
                             help="the policies (default: SmolLM2 and the tiny painter)")
    samples: int = flag(type=int, default=16, help="replies per policy and condition")
    max_new_tokens: int = flag(type=int, default=384, help="the length limit of a reply")
    temperature: float = flag(type=float, default=1.0, help="the sampling temperature")
    seed: int = flag(like=SEED, help="the seed of the first batch (batch b: seed + 8 b)")
    prompt: str = flag(default="full", choices=("full", "short"),
                       help="full: the trainer's system prompt and the request; short: the "
                       "request alone")
    results: Path = flag(type=Path, default=RESULTS / "fence-stop.json",
                         help="where the JSON goes")


def measure(policy_name: str, bench: FenceStopBench) -> dict[str, Any]:
    """One policy's replies without and with the stop, their token lengths and what it saved."""
    import torch

    from watercolour.train.evaluate import Sampling, load_policy, resolve_policy, sample_chats
    from watercolour.train.generation import saved_tokens, stopped_at_fence

    model, tokenizer = load_policy(resolve_policy(policy_name))
    replies: dict[bool, list[str]] = {}
    seconds: dict[bool, float] = {}
    for stop in (False, True):
        sampling = Sampling(samples=bench.samples, seed=bench.seed, prompt=bench.prompt,
                            max_new_tokens=bench.max_new_tokens,
                            temperature=bench.temperature, stop_at_fence=stop)
        started = time.perf_counter()
        with torch.no_grad():
            replies[stop] = sample_chats(model, tokenizer, [sampling.chat()] * bench.samples,
                                         sampling)
        seconds[stop] = round(time.perf_counter() - started, 1)

    def length(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    record = saved_tokens(map(length, replies[False]), map(length, replies[True]))
    stopped = [stopped_at_fence(r) for r in replies[True]]
    return {
        "policy": policy_name,
        **record,
        "stopped_at_fence": sum(stopped),
        "at_length_limit_without_stop": sum(n >= bench.max_new_tokens - 1
                                            for n in record["without_stop"]),
        "stopped_is_prefix": all(b.startswith(a.rstrip()) for a, b in
                                 zip(replies[True], replies[False])),
        "saved_share": round(record["saved_total"] / max(1, record["total_without_stop"]), 3),
        "seconds": {"without_stop": seconds[False], "with_stop": seconds[True]},
        "example_stopped": next((r for r, s in zip(replies[True], stopped) if s), None),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure every policy named and write the JSON."""
    import torch

    args = parser_for(FenceStopBench, description=__doc__.split("\n\n")[0]).parse_args(argv)
    bench = FenceStopBench(**vars(args))
    if bench.samples < 1 or bench.max_new_tokens < 1 or bench.temperature < 0:
        raise SystemExit("--samples and --max-new-tokens must be at least 1, --temperature >= 0")
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    load_start = os.getloadavg()
    rows = [measure(name, bench) for name in bench.policy]
    out = {"benchmark": "fence-stop", "options": {k: shown_path(v) if isinstance(v, Path) else v
                                                  for k, v in asdict(bench).items()},
           "policies": rows,
           "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                       "loadavg_start": [round(x, 2) for x in load_start],
                       "loadavg_end": [round(x, 2) for x in os.getloadavg()]}}
    write_json_atomic(bench.results, out)
    for row in rows:
        print(f"{row['policy']}: {row['saved_total']} of {row['total_without_stop']} tokens "
              f"saved ({row['saved_share']:.1%}); {row['stopped_at_fence']}/{bench.samples} "
              f"stopped at the fence; prefix check {row['stopped_is_prefix']}")
    print(json.dumps({"results": str(bench.results)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
