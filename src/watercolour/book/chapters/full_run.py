"""Chapter 07, "The full 35B run on an H200": the plumbing behind its cells (the LoRA plans in
words, the memory and cost lines, what the GPU check measured on one H200, the step time per
generation path, measured and projected, and the run's hours and cost per path, the replayed
curves' figure and summary), so the chapter shows the recipe, the plan, the measured day, the
launcher and the curves."""

from __future__ import annotations

import shlex
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from watercolour.analysis import published_curve, read_curve, thirds_means
from watercolour.notebooks import markdown_table

PLAN_KEYS = ("layers_adapted", "layers_total", "trainable_params", "experts_frozen")
"""What the chapter's results keep of a LoRA plan."""

MEMORY_KEYS = ("weights_gib", "lora_and_optimizer_gib", "activations_gib", "logits_gib",
               "kv_cache_gib", "total_gib")
"""The parts of the memory estimate, in the order the chapter prints them."""

STEP_MINUTES = (15, 18)
"""The reproduction's minutes per step on one H200 (its write-up)."""

CURVE_PANELS = (("reward", "group reward"), ("paint_fraction_mean", "paint coverage"),
                ("reward_std", "reward spread in a group"))
"""The replayed curves' columns and their panels' titles."""


GPU_CHECK = "train-gpu-20261204-170050.json"
"""The GPU check's recorded result (``benchmarks/train_gpu_check.py`` on a lent H200; a copy
ships in ``watercolour/results/benchmarks/``): random bf16 weights, one GRPO step each."""

DECODE_CHECK = "decode-check-2*.json"
"""The fast path's GPU check (``benchmarks/decode_check.py``): fla's decode speed-up measured
on this project's GPU, where one has run; until then the cited figure stands."""

CHECK_RUNS = (("4b", "smoke-4b"), ("35b", "full-35b"), ("revise", "revise-4b, 2 turns"))
"""The GPU check's runs (its JSON's keys) and their names in the chapter."""

PROMPT_TOKENS = 700
"""The prompt's tokens in the GPU check (its plan's micro-batch, 1,724, less the 1,024
completion tokens asked): the update's sequence is the prompt and the reply."""

REPLY_TOKENS = 2000
"""The longest reply of a group in the projections: real sketches run 1,500-3,000 tokens, and
a group's generation lasts as long as its longest reply."""

CITED: dict[str, tuple[float, str]] = {
    "fla_decode": (1.7, "fla on Qwen3.5 decode, batch 16: 51 -> 28 ms a request (1.8x; "
                        "iapp-technology/openthai-systemone#2); 1.7x taken"),
    "fla_update": (3.0, "fla's gated-delta core trains 8-12x faster on an H100 "
                        "(Comfy-Org/ComfyUI#13298); 3x taken for the whole update"),
    "vllm_token_ms": (9.87, "vLLM, Qwen3-Next-80B-A3B (hybrid, 3B active) on one H200, "
                            "concurrency 16: mean time per output token 9.87 ms "
                            "(vllm-project/vllm#36795); the weights' push to vLLM each step "
                            "not included (unmeasured)"),
    "vllm_old_logprobs": (1.3, "with vLLM, TRL's GRPO adds a no-grad forward for the old "
                               "log-probs: ~+30% of the update (trl/generation)"),
}
"""The cited measurements the projections take (value, source), as collected in the
project's GPU-speed notes; none was measured by this project."""

H200_USD_PER_HOUR = (3.45, 6.31)
"""An H200's on-demand price per GPU-hour, cheapest to dearest of 11 providers
(renshuBTC/compute-screener, ``data/gpu_providers_latest.csv``, read 2026-10-24); Hugging
Face Jobs' own price is on its pricing page."""

PATHS = (("fallback", "today: fallback kernels, transformers generation"),
         ("fla", "fla kernels, transformers generation"),
         ("vllm", "vLLM colocate, fla training"))
"""The generation paths the chapter projects, in order: key, name."""


def plan_record(plan: dict[str, Any]) -> dict[str, Any]:
    """The :data:`PLAN_KEYS` of a LoRA plan (``dry_run(...)["lora_plan"]``)."""
    return {k: plan[k] for k in PLAN_KEYS}


def describe_plans(plan: dict[str, Any], dense: dict[str, Any]) -> str:
    """The all-linear plan and the dense-model module list's plan, in three lines: the layers
    each adapts, the trainable parameters, whether the routed experts stay frozen."""
    return "\n".join([
        f"all-linear: {plan['layers_adapted']}/{plan['layers_total']} decoder layers adapted "
        f"{plan['layers_adapted_by_type']}",
        f"trainable: {plan['trainable_params']:,} of {plan['total_params']:,} "
        f"({plan['trainable_fraction']:.4%}); routed experts frozen: {plan['experts_frozen']}",
        f"dense-model list {dense['target_modules']}: attention adapted in "
        f"{dense['layers_adapted']}/{dense['layers_total']} layers "
        f"{dense['layers_adapted_by_type']}, {dense['trainable_params']:,} trainable"])


def describe_memory(memory: dict[str, Any]) -> str:
    """The memory estimate of a LoRA plan, a line per part, then whether it fits one GPU."""
    lines = [f"{key:<24} {memory[key]:>7.2f} GiB" for key in MEMORY_KEYS]
    lines.append(f"one H200: {memory['gpu_gib']} GiB -> fits: {memory['fits']}  "
                 f"({memory['assumptions']})")
    return "\n".join(lines)


def reproduction_hours(steps: int, minutes: tuple[float, float] = STEP_MINUTES) -> list[float]:
    """The GPU-hours of ``steps`` steps at the reproduction's ``minutes`` a step (low, high)."""
    return [steps * m / 60 for m in minutes]


def projected_hours(bench: dict[str, Any], steps: int,
                    workers: str = "8") -> tuple[list[float], str]:
    """From ``benchmarks/train_bench.py``'s result: the hours of ``steps`` steps with this
    project's renderer and ``workers`` browsers (low, high), and a line saying so."""
    projected = bench["projection_35b_step"]
    at = projected["by_workers"][workers]
    hours = [steps * (other + at["rendering_s"]) / 3600 for other in projected["non_rendering_s"]]
    line = (f"with this project's renderer and {workers} browsers: rendering "
            f"{at['share_min']:.1%}-{at['share_max']:.1%} of a step, "
            f"{hours[0]:.1f}-{hours[1]:.1f} H200-hours for the run")
    return hours, line


def format_command(command: list[str]) -> str:
    """A launch command (:func:`watercolour.train.launch.launch_command`) in two shell lines:
    the launcher up to ``--``, then, indented, what the job runs."""
    cut = command.index("--") + 1 if "--" in command else len(command)
    head, tail = shlex.join(command[:cut]), shlex.join(command[cut:])
    return f"{head} \\\n    {tail}" if tail else head


def read_published(mixes: str) -> dict[str, pd.DataFrame]:
    """The published curves named in ``mixes`` (comma-separated, e.g. ``hps-only,hps-led``)."""
    return {mix.strip(): read_curve(published_curve(mix.strip()))
            for mix in mixes.split(",") if mix.strip()}


def curves_figure(curves: dict[str, pd.DataFrame], window: int = 10) -> Figure:
    """One panel per :data:`CURVE_PANELS` column: each run's steps (faint) and their rolling
    mean over ``window`` steps, in the run's colour."""
    figure = Figure(figsize=(13, 3.6))
    axes = figure.subplots(1, len(CURVE_PANELS))
    for mix, curve in curves.items():
        for ax, (column, title) in zip(axes, CURVE_PANELS):
            line, = ax.plot(curve["step"], curve[column], alpha=0.25)
            ax.plot(curve["step"], curve[column].rolling(window, min_periods=1).mean(),
                    color=line.get_color(), label=mix)
            ax.set(title=title, xlabel="step")
    axes[0].legend()
    figure.tight_layout()
    return figure


def curve_summary(curves: dict[str, pd.DataFrame]) -> dict[str, dict[str, Any]]:
    """Per run: its steps, the reward's and paint coverage's first and last third (rounded to
    4 places, so that 2 places quoted from them match the curve's) and the steps with a
    collapsed group (``frac_reward_zero_std`` above 0)."""
    summary = {}
    for mix, curve in curves.items():
        parts = thirds_means(curve, ["reward", "paint_fraction_mean"])
        reward, cover = parts["reward"], parts["paint_fraction_mean"]
        summary[mix] = {"steps": len(curve),
                        "reward_thirds": [round(reward["first"], 4), round(reward["last"], 4)],
                        "paint_thirds": [round(cover["first"], 4), round(cover["last"], 4)],
                        "collapsed_steps": int((curve["frac_reward_zero_std"] > 0).sum())}
    return summary


def describe_summary(summary: dict[str, dict[str, Any]]) -> str:
    """:func:`curve_summary` in a line per run."""
    return "\n".join(
        f"{mix:<9} {s['steps']} steps: reward {s['reward_thirds'][0]:.2f} -> "
        f"{s['reward_thirds'][1]:.2f} (first -> last third), paint coverage "
        f"{s['paint_thirds'][0]:.2f} -> {s['paint_thirds'][1]:.2f}, groups collapsed: "
        f"{s['collapsed_steps']}" for mix, s in summary.items())


def measured_day(check: dict[str, Any]) -> list[dict[str, Any]]:
    """The GPU check's runs (:data:`CHECK_RUNS`, those it measured): peak memory and the
    plan's estimate, the step, its generation and update, generation's share, the mean reply
    (tokens) and one decode step of the batch (generation time over the reply's tokens)."""
    rows = []
    for key, name in CHECK_RUNS:
        run = check.get(key) or {}
        if "step_s" not in run:
            continue
        tokens = float(run["completions_mean_length"])
        rows.append({"run": name, "peak_gib": run["peak_gib"], "plan_gib": run["estimate_gib"],
                     "step_s": run["step_s"], "generation_s": run["generation_s"],
                     "update_s": run["update_s"], "generation_share": run["generation_share"],
                     "reply_tokens": tokens,
                     "decode_ms": round(1000 * run["generation_s"] / tokens, 1)})
    return rows


def kernel_path(check: dict[str, Any]) -> str:
    """Which kernels the GPU check's linear-attention layers ran, in words."""
    fast = check.get("fast_kernels", {})
    used = [name for name, on in fast.items() if on]
    if not used:
        return "the PyTorch fallback (neither flash-linear-attention nor causal-conv1d)"
    return f"fast kernels: {', '.join(used)}"


def measured_table(rows: list[dict[str, Any]]) -> str:
    """:func:`measured_day` as a Markdown table of five columns."""
    return markdown_table(
        ["run", "peak of plan (GiB)", "step (s)", "generation", "decode step (ms)"],
        [[r["run"], f"{r['peak_gib']:.1f} of {r['plan_gib']:.1f}", f"{r['step_s']:.0f}",
          f"{r['generation_share']:.0%}", f"{r['decode_ms']:.0f}"] for r in rows])


def measured_decode_speedup(decode: dict[str, Any] | None, key: str,
                            context: str = "2500") -> float | None:
    """fla's decode speed-up over the fallback that ``benchmarks/decode_check.py`` measured
    for ``key`` at ``context`` tokens, if it ran there and fla's logits matched the fallback's
    top tokens (at least 99% of positions); else None."""
    run = (decode or {}).get(key) or {}
    factor = run.get("speedup", {}).get("fla", {}).get(context)
    agreed = [a for a in run.get("agreement", [])
              if a["path"] == "fla" and str(a["context"]) == context]
    if factor is None or not agreed or agreed[0]["decode"]["top_token_agreement"] < 0.99:
        return None
    return float(factor)


def step_time(run: dict[str, Any], path: str, *, reply_tokens: int = REPLY_TOKENS,
              prompt_tokens: int = PROMPT_TOKENS, fla_decode: float | None = None,
              cited: dict[str, tuple[float, str]] = CITED) -> float:
    """A step's seconds (generation and update) on ``path`` (:data:`PATHS`) with a longest
    reply of ``reply_tokens``, from a measured run of the GPU check (a :func:`measured_day`
    row): generation is the measured decode step times the reply's tokens, the update scales
    with the tokens of its sequence (prompt and reply). ``fla`` divides the decode step by
    ``fla_decode`` (measured) or the cited factor and the update by the cited one; ``vllm``
    generates at the cited vLLM time per token and trains on fla, plus the old log-probs'
    forward."""
    generation = run["decode_ms"] / 1000 * reply_tokens
    update = run["update_s"] * (prompt_tokens + reply_tokens) / (prompt_tokens
                                                                 + run["reply_tokens"])
    if path == "fallback":
        return generation + update
    fla_update = update / cited["fla_update"][0]
    if path == "fla":
        return generation / (fla_decode or cited["fla_decode"][0]) + fla_update
    if path == "vllm":
        return (cited["vllm_token_ms"][0] / 1000 * reply_tokens
                + fla_update * cited["vllm_old_logprobs"][0])
    raise ValueError(f"unknown path {path!r}: one of {[p for p, _ in PATHS]}")


def step_paths(check: dict[str, Any], decode: dict[str, Any] | None = None,
               reply_tokens: int = REPLY_TOKENS) -> list[dict[str, Any]]:
    """The step time per path for the 4B and the 35B: first the GPU check's measured step
    (fallback kernels, its time-capped replies), then each of :data:`PATHS` projected by
    :func:`step_time` at ``reply_tokens``; each row with its source."""
    runs = {r["run"]: r for r in measured_day(check)}
    small, large = runs["smoke-4b"], runs["full-35b"]
    tokens = round((small["reply_tokens"] + large["reply_tokens"]) / 2)
    rows = [{"path": f"measured: fallback, ~{tokens}-token replies", "kind": "measured",
             "4b": small["step_s"], "35b": large["step_s"], "source": GPU_CHECK}]
    for path, name in PATHS:
        factors = {k: measured_decode_speedup(decode, k) for k in ("4b", "35b")}
        seconds = {k: step_time(run, path, reply_tokens=reply_tokens, fla_decode=factors[k])
                   for k, run in (("4b", small), ("35b", large))}
        if path == "fallback":
            source = f"{GPU_CHECK}, scaled to the reply"
        elif path == "fla" and all(factors.values()):
            source = "decode: this project's decode check; update: " + \
                CITED["fla_update"][1]
        elif path == "fla":
            source = f"{CITED['fla_decode'][1]}; {CITED['fla_update'][1]}"
        else:
            source = f"{CITED['vllm_token_ms'][1]}; {CITED['vllm_old_logprobs'][1]}"
        rows.append({"path": f"projected: {name}", "kind": "projected",
                     **{k: round(v, 1) for k, v in seconds.items()}, "source": source})
    return rows


def run_costs(paths: list[dict[str, Any]], steps: int, rendering_s: float = 0.0,
              usd_per_hour: tuple[float, float] = H200_USD_PER_HOUR) -> list[dict[str, Any]]:
    """The 35B run of ``steps`` steps per projected path of :func:`step_paths`: each step's
    generation and update plus ``rendering_s``, in hours, and its cost at ``usd_per_hour``
    (low, high)."""
    rows = []
    for row in paths:
        if row["kind"] != "projected":
            continue
        hours = steps * (row["35b"] + rendering_s) / 3600
        rows.append({"path": row["path"].removeprefix("projected: "),
                     "step_s": round(row["35b"] + rendering_s, 1), "hours": round(hours, 1),
                     "usd": [round(hours * p) for p in usd_per_hour]})
    return rows


def paths_table(paths: list[dict[str, Any]]) -> str:
    """:func:`step_paths` as a Markdown table (path, the 4B's and the 35B's step) and its
    sources as a numbered list below it."""
    table = markdown_table(["path (a step of 8 replies)", "4B (s)", "35B (s)"],
                           [[f"{r['path']} [{i}]", f"{r['4b']:.0f}", f"{r['35b']:.0f}"]
                            for i, r in enumerate(paths, 1)])
    sources = [f"{i}. {r['source']}" for i, r in enumerate(paths, 1)]
    return table + "\n\nSources:\n\n" + "\n".join(sources)


def costs_table(costs: list[dict[str, Any]]) -> str:
    """:func:`run_costs` as a Markdown table (path, step, hours, cost)."""
    return markdown_table(["path", "35B step (s)", "hours", "cost (USD)"],
                          [[c["path"], f"{c['step_s']:.0f}", f"{c['hours']:.1f}",
                            f"{c['usd'][0]:,}-{c['usd'][1]:,}"] for c in costs])


MEASURED_QUOTES = {"peak": "peak_gib", "plan": "plan_gib", "step": "step_s",
                   "share": "generation_share", "decode": "decode_ms"}
"""The 35B's measured figures the chapter's prose quotes (glue name -> field)."""


def glue_measured(rows: list[dict[str, Any]], run: str = "full-35b") -> None:
    """Glue ``run``'s measured figures (:data:`MEASURED_QUOTES`) as ``<name>-35b`` and the
    GPU check's file name as ``gpu-check-file``, for the chapter's prose."""
    from myst_nb import glue

    row = {r["run"]: r for r in rows}[run]
    glue("gpu-check-file", GPU_CHECK, display=False)
    for name, key in MEASURED_QUOTES.items():
        glue(f"{name}-35b", row[key], display=False)


def rendering_seconds(bench: dict[str, Any] | None, workers: int = 8) -> float:
    """A 35B step's rendering time with ``workers`` browsers, as the train bench projects it
    (0 when no bench result is at hand)."""
    if bench is None:
        return 0.0
    return float(bench["projection_35b_step"]["by_workers"][str(workers)]["rendering_s"])


def glue_prices() -> None:
    """Glue the H200's hourly price range (``usd-low``, ``usd-high``) for the prose."""
    from myst_nb import glue

    low, high = H200_USD_PER_HOUR
    glue("usd-low", f"{low:.2f}", display=False)
    glue("usd-high", f"{high:.2f}", display=False)
