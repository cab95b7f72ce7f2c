"""Episodes of several turns for GRPO (``--turns K``): the policy sketches, reads the critique
of its render, and revises; the group's advantage comes from the episode's reward.

One episode, as :class:`EpisodeRollout` plays it for every rollout of a batch at once::

    prompt -> turn 1 (the policy) -> critique (the environment) -> turn 2 (the policy) -> ...

Each turn is scored by the run's reward source (in process, ``--env-url``, or a test's
stand-in), the whole batch at once, every turn of a group against the same references (the
group's seed, as in single-turn training). The environment's own pieces make the rest
(:mod:`watercolour.env.server.environment`, nothing restated here): :func:`turn_record` writes
each turn's record and its critique (the render's own measurements, never the references or
the score), :func:`revision_prompt` the user turn around it, and :func:`episode_reward` the
episode's reward (the last turn's, less the optional regression penalty,
``WATERCOLOUR_ENV_REGRESSION_PENALTY`` as on the server: never more than the last sketch earns
on every turn, so a sabotaged first turn gains nothing). An unavailable turn ends its episode
with reward ``None`` (TRL drops it from its group).

What GRPO trains on: the completion is every token after the prompt, the policy's turns and
the environment's turns between them; ``env_mask`` (TRL's name; its ``tool_mask`` inside) is
1 on what the policy wrote and 0 on the critique turns (and on an end-of-turn token added
after a turn cut off at ``max_completion_length``), so the loss never trains on a critique.
Each turn may write up to ``max_completion_length`` tokens.

**Why ``rollout_func`` and not ``environment_factory``** (TRL 1.16 offers both):

- ``environment_factory`` makes the environment's methods *tools*: a second turn happens only
  when the policy itself emits a tool call in its chat template's tool-call syntax, and the
  environment's answer comes back as a ``tool`` message. Our policy answers with a fenced
  JavaScript block, and the revision is the environment's request (a user turn with the
  critique), not the model's choice, so the episode's K turns would not be K turns. TRL also
  refuses it outright here: it needs a chat template that renders tool calls
  (``supports_tool_calling``) and a response parser, and the tiny painter's, the tiny Qwen3's
  and SmolLM2's ChatML templates have neither.
- ``rollout_func`` hands the generation of a batch to us: we call TRL's own generation of
  one turn (``GRPOTrainer._generate_single_turn``: transformers' ``generate``, or the
  trainer's vLLM engine with ``--use-vllm``; its prompts tokenized by ``_tokenize_prompts``,
  the same chat template and kwargs) once per turn, score between turns, and return
  ``prompt_ids``, ``completion_ids``, ``logprobs``, ``env_mask`` and per-rollout fields that
  TRL passes to the reward function. TRL then does the rest as for any batch
  (log-probabilities, advantages, loss under ``completion_mask * env_mask``).

**With vLLM** (``--use-vllm``) every turn goes through the one engine TRL built for the run
(``trainer.vllm_generation``: the colocated ``LLM``, or the server's client), its weights
synced once a step before the first turn (TRL's ``_generate`` does it for a ``rollout_func``).
Three things make that right:

- *Log-probabilities.* vLLM returns the log-probability of each token it sampled; TRL needs
  them per completion token (``logprobs``, its ``sampling_per_token_logps``) for the
  importance-sampling correction (``vllm_importance_sampling_correction``, on by default),
  which compares them with the trainer's own on ``completion_mask * env_mask``. Each turn's
  are carried onto the completion beside its tokens; the environment's tokens (the critique,
  a picture, the end token closing a cut-off turn) get 0.0, as TRL's tool loop gives a tool's
  answer; the mask keeps them out of the ratio and the loss. Without vLLM (transformers
  generates) there are none: ``logprobs`` is None, as on TRL's own path.
- *One completion per row.* Each turn is called with ``num_generations=1``: from turn 2 every
  row has its own history, and TRL's server mode keeps every ``num_generations``-th prompt of
  a call and samples that many from each (its de-duplication of a group's copies), which for
  any other value samples the wrong prompts (TRL's tool loop passes 1 for the same reason).
  In colocate mode the value is not read (one sample per prompt). Turn 1's copies of a
  prompt are then sampled one by one: the same distribution, their prefix cached.
- *Several processes.* vLLM's server mode gathers every process's prompts and hands each
  back an equal share, and DeepSpeed ZeRO-3 generation is collective too; so under more than
  one process every process asks for all its rows every turn (an episode that ended early is
  asked its bare prompt and the reply dropped) and plays all K turns.

A picture goes to vLLM as TRL passes any prompt's images: ``images`` (per row, the renders its
conversation shows, in order) beside the token ids, which hold the picture's expanded pad
tokens; the colocated engine gets them as ``multi_modal_data`` (TRL 1.16's
``VLLMGeneration.generate``, the input its own tool loop gives for a tool's image), a server
as features placed on those pad tokens. The engine reads the picture with the model's own
processor settings, which must match the trainer's (Qwen3.5's published ones:
:data:`watercolour.train.vision.QWEN35_IMAGES`). A cost of sleep mode
(``--vllm-enable-sleep-mode``): TRL puts the colocated engine to sleep at level 2 (weights
dropped) after every call and pushes the weights again before the next, so each turn after
the first costs one more weight sync (the scoring between turns runs while it sleeps).

**A vision policy sees its render** (``--show-render``; unset: on for a vision policy, off for
a text one, :mod:`watercolour.train.vision` says which policies are vision ones): the revision
turn is a multimodal user message, the render first, then the critique
(``[{"type": "image", ...}, {"type": "text", ...}]``, the revision prompt saying the render is
attached), tokenized by the policy's processor, so the chat template puts the picture's
vision tokens (Qwen3.5: ``<|vision_start|>``, one ``<|image_pad|>`` per merged 32 x 32 patch,
``<|vision_end|>``) where the picture is. Turn 2 is generated with the picture (transformers: its
``pixel_values``, ``image_grid_thw`` and ``mm_token_type_ids``, TRL's
``_generate_single_turn`` passing a ``rollout_func``'s multimodal fields to ``generate``;
vLLM: the picture itself, above), and
the rollout returns each episode's pictures (``images``) so that every forward pass of the
batch, the loss's included, sees them (the trainer's part:
:class:`~watercolour.train.trainer.WatercolourGRPOTrainer`; TRL 1.16's ``rollout_func`` path
drops images otherwise). The picture's tokens are the environment's: ``env_mask`` is 0 on
them as on the critique. A turn without a render (rejected before rendering, or a server that
sent no PNG) gets the text-only critique. Why the render and not only its measurements: the
critique is words about a picture the policy never saw; a vision policy can check its own
shapes and colours, and the vision tower's gradient (``--adapt-vision``) can learn what to
look at. Why a text policy is never shown one: it has no tower to read it.

Limits: episodes read their subject from ``--subject`` (the dataset has one subject); the
environment's turn is located in the chat template's rendering by TRL's rule for a tool's
answer (what a new user turn adds after the assistant's end-of-turn token, the earlier turns
rendered alike; Qwen3's and Qwen3.5's templates re-render the assistant turn itself without
its reasoning block, which changes nothing here: the policy's own tokens stay as it wrote
them); the images' inputs follow Qwen's layout (``image_grid_thw``), the one the policies here
use.

Logged per step (``metrics.csv``): ``reward_turn1``, ``reward_turn2``, ... (the mean reward of
each turn's scored rollouts), ``revision_beats_first`` (the share of episodes, both ends scored,
whose last turn earned more than the first) and ``regression_penalty_mean`` (what the
penalty took, on average); the project's
batch metrics (``gate_pass_rate``, ``hps_mean``, ...) are the last turn's. The rollout log
gets one line per turn (``turn``, ``critique``, ``episode_reward`` beside the usual fields;
with ``--show-render``, ``saw_render``: whether the turn was written looking at the previous
turn's render; the render ``png/step-N/gGG-iII-tT.png``).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from statistics import mean
from typing import Any

from watercolour.env.models import TurnRecord
from watercolour.env.server.environment import episode_reward, revision_prompt, turn_record
from watercolour.errors import InputError
from watercolour.rewards import Evaluation
from watercolour.rewards.references import group_seed
from watercolour.rewards.trl import love_option, prompt_key
from watercolour.train.reward_source import batch_metrics, rendering_wall_s

EPISODE_REWARD = "episode_reward"
"""The per-rollout field the rollout returns and the reward function reads."""
IMAGES = "images"
"""The per-rollout field of the renders shown in the completion (PIL images, in order; None:
none), which the trainer feeds to the forward pass (:mod:`watercolour.train.vision`)."""


def episode_columns(turns: int) -> tuple[str, ...]:
    """The metrics.csv columns a run of ``turns`` turns adds (none for one turn)."""
    if turns <= 1:
        return ()
    return (*(f"reward_turn{t}" for t in range(1, turns + 1)), "revision_beats_first",
            "regression_penalty_mean")


def _rendered(processing_class: Any, conversation: list[dict[str, Any]], generation: bool,
              chat_template: Any, kwargs: dict[str, Any]) -> tuple[list[int], dict[str, Any]]:
    """The token ids of ``conversation`` as the chat template renders it, and (a processor's
    picture) its image inputs as tensors."""
    processor = hasattr(processing_class, "image_processor")
    out = processing_class.apply_chat_template(
        conversation, add_generation_prompt=generation, tokenize=True, return_dict=True,
        chat_template=chat_template, **({"return_tensors": "pt"} if processor else {}),
        **kwargs)
    ids = out["input_ids"]
    ids = ids[0] if processor else ids
    fields = {k: out[k] for k in ("pixel_values", "image_grid_thw") if k in out}
    return [int(t) for t in ids], fields


def environment_turn(processing_class: Any, user_text: str, image: Any = None, *,
                     chat_template: Any = None, template_kwargs: dict[str, Any] | None = None
                     ) -> tuple[list[int], dict[str, Any]]:
    """The tokens of one environment turn (the user's message, with ``image`` before the text
    when given, and the next assistant header) as the chat template renders them after an
    assistant turn has ended, and the picture's image inputs (``pixel_values``,
    ``image_grid_thw``; none without ``image``). ``processing_class``: a tokenizer, or the
    processor of a vision policy (needed for ``image``).

    The rule is TRL's for a tool's answer (``_get_tool_suffix_ids``), with a user turn: render
    a dummy exchange with and without the new turn and keep what the new turn adds after the
    assistant turn's end-of-turn token. The earlier turns must render alike; the assistant turn
    itself may not (Qwen3's and Qwen3.5's templates drop an earlier turn's reasoning block
    once a user turn follows it: the policy's own tokens stay as it wrote them)."""
    kwargs = dict(template_kwargs or {})
    tokenizer = getattr(processing_class, "tokenizer", processing_class)
    if image is not None and not hasattr(processing_class, "image_processor"):
        raise InputError("a picture in the environment's turn needs a vision policy's "
                         "processor, not a tokenizer")
    content: Any = user_text if image is None else [{"type": "image", "image": image},
                                                    {"type": "text", "text": user_text}]
    talk = [{"role": "user", "content": "dummy"}, {"role": "assistant", "content": "dummy"}]
    prefix, _ = _rendered(processing_class, talk, False, chat_template, kwargs)
    full, fields = _rendered(processing_class, [*talk, {"role": "user", "content": content}],
                             True, chat_template, kwargs)
    eos = tokenizer.eos_token_id
    ends, full_ends = ([i for i, t in enumerate(ids) if t == eos] for ids in (prefix, full))
    if not ends:  # no end-of-turn token: the whole prefix must come first (TRL's rule)
        if full[:len(prefix)] != prefix:
            raise ValueError("the chat template renders an earlier turn differently once "
                             "another follows it: the environment's turn cannot be told apart")
        return full[len(prefix):], fields
    if len(full_ends) <= len(ends) or \
            prefix[:ends[-2] + 1 if len(ends) > 1 else 0] != \
            full[:ends[-2] + 1 if len(ends) > 1 else 0]:
        raise ValueError("the chat template renders an earlier turn differently once another "
                         "follows it: the environment's turn cannot be told apart")
    return full[full_ends[len(ends) - 1] + 1:], fields


def environment_turn_ids(tokenizer: Any, user_text: str, *, chat_template: Any = None,
                         template_kwargs: dict[str, Any] | None = None) -> list[int]:
    """The tokens of a text-only environment turn (:func:`environment_turn`)."""
    return environment_turn(tokenizer, user_text, chat_template=chat_template,
                            template_kwargs=template_kwargs)[0]


def places(keys: Sequence[str]) -> list[dict[str, int]]:
    """Each rollout's group (distinct prompts in order of appearance) and index in it."""
    groups: dict[str, int] = {}
    counts: dict[int, int] = {}
    out = []
    for key in keys:
        group = groups.setdefault(key, len(groups))
        out.append({"group": group, "index": counts.get(group, 0)})
        counts[group] = out[-1]["index"] + 1
    return out


Scored = Callable[..., None]
"""(prompts, completions, evaluations, step, extra) -> None: one turn of a batch, scored."""


class EpisodeRollout:
    """TRL's ``rollout_func``: plays the batch's episodes of ``turns`` turns (module docstring).

    Args:
        source: the reward source (``evaluate_group``; a GuardedRewarder never raises).
        turns: turns an episode has (2: a sketch and one revision).
        subject: what the policy paints (the dataset's one subject).
        on_scored: gets each scored turn (the rollout log).
        penalty: the regression penalty (default: the server's variable,
            ``WATERCOLOUR_ENV_REGRESSION_PENALTY``).
        schedule: the references' curriculum (:mod:`watercolour.rewards.curriculum`; None or
            ``half``: the source's default draw).
        show_render: put each render into the revision turn as a picture (a vision policy:
            the trainer's processing class is its processor).
    """

    def __init__(self, source: Any, turns: int, subject: str, on_scored: Scored | None = None,
                 penalty: float | None = None, schedule: Any = None,
                 show_render: bool = False) -> None:
        if turns < 2:
            raise ValueError(f"an episode of revisions has at least 2 turns, got {turns}")
        if penalty is None:
            from watercolour.env.config import EnvConfig

            penalty = EnvConfig.from_env().regression_penalty
        self.source, self.turns, self.subject = source, turns, subject
        self.on_scored = on_scored
        self.schedule = schedule
        self.show_render = show_render
        self.penalty = float(penalty)
        self.last: list[list[TurnRecord]] = []  # the last batch's histories (tests, analysis)

    # ------------------------------------------------------------ the reward function
    def reward_function(self) -> Callable[..., list[float | None]]:
        """The one TRL reward function of an episode run (weight 1): the episode's reward."""

        def episode(completions: list[Any], **kwargs: Any) -> list[float | None]:
            return list(kwargs[EPISODE_REWARD])

        return episode

    # ------------------------------------------------------------ the rollout
    def _score(self, replies: list[str], keys: list[str], step: int, state: Any = None
               ) -> list[Evaluation]:
        out: list[Evaluation | None] = [None] * len(replies)
        groups: OrderedDict[str, list[int]] = OrderedDict()
        for i, key in enumerate(keys):
            groups.setdefault(key, []).append(i)
        base = self.source.config.seed
        more = love_option(self.schedule, step, self.source.config.references, state)
        for key, rows in groups.items():
            seed = group_seed(base, step, key)
            for i, e in zip(rows, self.source.evaluate_group([replies[i] for i in rows],
                                                              self.subject, seed, **more)):
                e.record.step = step
                out[i] = e
        return [e for e in out if e is not None]

    def _environment_turn(self, trainer: Any, record: TurnRecord, evaluation: Evaluation
                          ) -> tuple[list[int], dict[str, Any], Any]:
        """The environment's turn after ``record`` (the critique, and with ``show_render`` the
        render when there is one): its tokens, image inputs and the picture (or None)."""
        from watercolour.train.vision import png_image

        image = png_image(evaluation.png) if self.show_render and evaluation.png else None
        ids, fields = environment_turn(
            trainer.processing_class, revision_prompt(record.critique, image is not None),
            image, chat_template=trainer.chat_template,
            template_kwargs=trainer.chat_template_kwargs)
        return ids, fields, image

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        if self.show_render and not getattr(trainer, "_is_vlm", False):
            raise InputError("show_render needs a vision policy: the trainer's processing "
                             "class must be its processor")
        step = int(trainer.state.global_step)
        tokenizer = getattr(trainer, "_tokenizer", trainer.processing_class)
        ends = {*trainer.eos_token_ids, tokenizer.pad_token_id}
        keys = [prompt_key(p) for p in prompts]
        prompt_ids, _, _ = trainer._tokenize_prompts(prompts)
        prompt_ids = [list(ids) for ids in prompt_ids]
        completion: list[list[int]] = [[] for _ in prompts]
        mask: list[list[int]] = [[] for _ in prompts]
        # the sampler's log-probability of each completion token (vLLM's; 0.0 on the
        # environment's tokens, as TRL's tool loop fills a tool's answer); None: not given
        logps: list[list[float | None]] | None = [[] for _ in prompts]
        shown: list[list[tuple[Any, dict[str, Any]]]] = [[] for _ in prompts]  # per rollout
        saw: set[tuple[int, int]] = set()  # (rollout, turn): the turn saw the last render
        histories: list[list[TurnRecord]] = [[] for _ in prompts]
        played: list[tuple[list[int], list[str], list[Evaluation]]] = []  # per turn
        active = list(range(len(prompts)))
        lockstep = processes(trainer) > 1
        scoring = render = 0.0
        for turn in range(1, self.turns + 1):
            live = set(active)
            # with several processes every one asks for every row each turn (an ended
            # episode's row is asked its bare prompt, its reply dropped): generation is
            # collective there (vLLM server: gathered and sliced by equal shares)
            rows = list(range(len(prompts))) if lockstep else active
            asked = [prompt_ids[i] + completion[i] if i in live else prompt_ids[i]
                     for i in rows]
            pictures = [[image for image, _ in shown[i]] if i in live else [] for i in rows]
            written, sampled = trainer._generate_single_turn(
                asked, [p or None for p in pictures] if any(pictures) else None,
                generation_fields(asked, [shown[i] if i in live else [] for i in rows],
                                  getattr(trainer, "_image_pad_token_id", None)),
                1)  # num_generations: each row is its own conversation (module docstring)
            if sampled is None:
                logps = None
            kept = [(list(ids), None if sampled is None else list(sampled[r]))
                    for r, (i, ids) in enumerate(zip(rows, written)) if i in live]
            written = [ids for ids, _ in kept]
            replies = tokenizer.batch_decode(written, skip_special_tokens=True)
            started = time.perf_counter()
            scored = self._score(replies, [keys[i] for i in active], step, trainer.state)
            scoring += time.perf_counter() - started
            render += rendering_wall_s(scored, self.source)
            played.append((active, replies, scored))
            for i, (ids, lp), reply, e in zip(active, kept, replies, scored):
                histories[i].append(turn_record(e, reply, turn,
                                                histories[i][-1] if histories[i] else None))
                completion[i] += ids
                mask[i] += [1] * len(ids)
                if logps is not None:
                    if lp is None or len(lp) != len(ids):
                        raise ValueError(f"turn {turn}: the generation gave "
                                         f"{None if lp is None else len(lp)} log-probabilities "
                                         f"for {len(ids)} tokens")
                    logps[i] += lp
            # an unavailable turn ends its episode (reward None); the others go on
            going = {i: e for i, e in zip(active, scored) if e.status != "unavailable"}
            active = list(going)
            if turn == self.turns or not (active or lockstep):
                break
            for i in active:  # the environment's turn: the critique (+ the render), masked
                user, fields, image = self._environment_turn(trainer, histories[i][-1],
                                                             going[i])
                if image is not None:
                    shown[i].append((image, fields))
                    saw.add((i, turn + 1))
                if completion[i][-1] not in ends:  # cut at the length limit, or at its fence
                    user = [tokenizer.eos_token_id, *user]
                completion[i] += user
                mask[i] += [0] * len(user)
                if logps is not None:
                    logps[i] += [0.0] * len(user)
        rewards = [episode_reward(h, self.penalty) for h in histories]
        self.last = histories
        if self.on_scored is not None:
            place = places(keys)
            for turn, (rows, replies, scored) in enumerate(played, start=1):
                extra = [{**place[i], "turn": turn, "turns": self.turns,
                          "critique": histories[i][turn - 1].critique,
                          "episode_reward": rewards[i][0],
                          **({"saw_render": (i, turn) in saw} if self.show_render else {})}
                         for i in rows]
                self.on_scored([prompts[i] for i in rows], replies, scored, step, extra)
        final = []  # each episode's last turn
        for i, history in enumerate(histories):
            rows, _, scored = played[len(history) - 1]
            final.append(scored[rows.index(i)])
        self._log(trainer, histories, rewards, final, scoring, render)
        out = {"prompt_ids": prompt_ids, "completion_ids": completion, "logprobs": logps,
               "env_mask": mask, EPISODE_REWARD: [r for r, _ in rewards]}
        if self.show_render:
            out[IMAGES] = [[image for image, _ in row] or None for row in shown]
        return out

    def _log(self, trainer: Any, histories: list[list[TurnRecord]],
             rewards: Sequence[tuple[float | None, float]], final: list[Evaluation],
             scoring: float, render: float) -> None:
        metrics = trainer._metrics["train" if trainer.model.training else "eval"]
        for t in range(1, self.turns + 1):
            values = [h[t - 1].reward for h in histories
                      if len(h) >= t and h[t - 1].reward is not None]
            if values:
                metrics[f"reward_turn{t}"].append(mean(values))
        pairs = [(h[0].reward, h[-1].reward) for h, (r, _) in zip(histories, rewards)
                 if r is not None and len(h) > 1]
        if pairs:
            metrics["revision_beats_first"].append(mean(float(b > a) for a, b in pairs))
        taken = [p for r, p in rewards if r is not None]
        if taken:
            metrics["regression_penalty_mean"].append(mean(taken))
        for name, value in batch_metrics(final, self.source.mix.weights).items():
            metrics[name].append(value)  # the project's batch metrics: each episode's last turn
        metrics["time/rewards_s"].append(scoring)
        metrics["time/render_s"].append(render)
        trainer.scoring_in_generation_s = scoring


def processes(trainer: Any) -> int:
    """How many processes generate together (accelerate's ``num_processes``; 1 without)."""
    return int(getattr(getattr(trainer, "accelerator", None), "num_processes", 1) or 1)


def generation_fields(asked: Sequence[Sequence[int]],
                      shown: Sequence[Sequence[tuple[Any, dict[str, Any]]]],
                      image_token_id: int | None) -> dict[str, Any]:
    """The multimodal fields TRL's ``_generate_single_turn`` passes to ``generate`` for the
    rows ``asked`` (token ids) that were shown the pictures ``shown`` (per row: (image, its
    inputs), in order): every picture's ``pixel_values`` and ``image_grid_thw`` in row order and
    ``mm_token_type_ids`` (1 on the image pad tokens; TRL left-pads it); none without one."""
    import torch

    inputs = [fields for row in shown for _, fields in row]
    if not inputs:
        return {}
    return {"pixel_values": torch.cat([f["pixel_values"] for f in inputs]),
            "image_grid_thw": torch.cat([f["image_grid_thw"] for f in inputs]),
            "mm_token_type_ids": [[int(t == image_token_id) for t in ids] for ids in asked]}
