"""TRL-compatible reward functions: ``(completions, **kwargs) -> list[float | None]``.

One function per component of the rubric with a weight above zero (``gate``, ``length``,
``judge``, ``hps``, ``pigment``), returning the component's **raw** score; pass
:meth:`RewardFunctions.weights` as ``GRPOConfig.reward_weights`` and TRL's weighted sum is
exactly the mix's total, while its logs get a curve per component (``rewards/judge/mean``,
...). The batch is evaluated once (by the first function TRL calls) and the others read the
same evaluations.

- A rejected sketch: every component 0 (total 0).
- An unavailable rollout (render, HPS or judge failed): every function returns ``None`` for
  it, so TRL leaves the row out of its group's statistics (a lone ``None`` would only drop that
  one function and TRL would sum the rest: never a partial score).

Groups: rollouts with the same prompt in a batch form a group and face the same references,
drawn with ``group_seed(config.seed, global_step, prompt)`` (recorded in each breakdown). With
a single-subject dataset every rollout of a step has the same prompt, so the whole step shares
one draw (as in the reproduction, where a step's reward moved with the references it drew).
A ``subject`` dataset column, when present, gives each row's subject. A ``schedule``
(:class:`~watercolour.rewards.curriculum.ReferencesSchedule`, other than ``half``) sets how
many of each group's references come from ``love`` at the step (``trainer_state.max_steps``
is the run's length).

    >>> functions = RewardFunctions(Rewarder(renderer=renderer))
    >>> trainer = GRPOTrainer(..., reward_funcs=functions.functions(),
    ...                       args=GRPOConfig(..., reward_weights=functions.weights()))
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Sequence
from statistics import mean
from typing import Any

from watercolour.openai_compat import join_content
from watercolour.rewards.curriculum import ReferencesSchedule
from watercolour.rewards.evaluate import Evaluation, Rewarder
from watercolour.rewards.references import group_seed

CACHE_BATCHES = 4


def completion_text(completion: Any) -> str:
    """The reply text of a completion: a string, or a conversational list of messages (the
    last assistant message's content)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, Sequence):
        for message in reversed(list(completion)):
            if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
                return join_content(message.get("content")) or ""
    return str(completion)


def love_option(schedule: ReferencesSchedule | None, step: int, n: int,
                state: Any = None) -> dict[str, int]:
    """``evaluate_group``'s keyword for a step's draw: ``{"love": k}`` under a schedule other
    than ``half``, else nothing (the source draws as it always has). ``state``: the trainer's
    state, whose ``max_steps`` a ``linear`` schedule reads."""
    if schedule is None or schedule.is_default:
        return {}
    total = int(getattr(state, "max_steps", 0) or 0) or None
    return {"love": schedule.love(step, int(n), total)}


def prompt_key(prompt: Any) -> str:
    """A prompt as the text its group is keyed and seeded by (a conversation: its JSON)."""
    return prompt if isinstance(prompt, str) else json.dumps(prompt, sort_keys=True,
                                                             default=str)


class _Component:
    """One named reward function (TRL names it by ``__name__``)."""

    def __init__(self, owner: RewardFunctions, name: str) -> None:
        self.owner = owner
        self.__name__ = name

    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float | None]:
        return [e.component(self.__name__) for e in self.owner.evaluations(completions,
                                                                           **kwargs)]


class _Total:
    __name__ = "watercolour_reward"

    def __init__(self, owner: RewardFunctions) -> None:
        self.owner = owner

    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float | None]:
        return [e.reward for e in self.owner.evaluations(completions, **kwargs)]


class RewardFunctions:
    """TRL reward functions over one :class:`Rewarder` (see the module docstring).

    Args:
        rewarder: scores each group.
        on_evaluations: called with every newly evaluated batch (a list of
            :class:`Evaluation`): log the breakdowns with the rollouts there.
        default_subject: when the dataset has no ``subject`` column.
        schedule: the references' curriculum (None or ``half``: the reward source's default
            draw, and ``evaluate_group`` is called without ``love``).
    """

    def __init__(self, rewarder: Rewarder,
                 on_evaluations: Callable[[list[Evaluation]], None] | None = None,
                 default_subject: str | None = None,
                 schedule: ReferencesSchedule | None = None) -> None:
        self.rewarder = rewarder
        self.on_evaluations = on_evaluations
        self.default_subject = default_subject
        self.schedule = schedule
        self._cache: OrderedDict[tuple, list[Evaluation]] = OrderedDict()

    # ------------------------------------------------------------ for the trainer
    def functions(self) -> list[Callable[..., list[float | None]]]:
        """One function per component with a weight above zero."""
        return [_Component(self, name) for name in self.rewarder.mix.active()]

    def weights(self) -> list[float]:
        """``GRPOConfig.reward_weights`` for :meth:`functions`."""
        return [self.rewarder.mix.weight(name) for name in self.rewarder.mix.active()]

    def total(self) -> Callable[..., list[float | None]]:
        """The total alone, as one function (weight 1)."""
        return _Total(self)

    # ------------------------------------------------------------ evaluation
    def evaluations(self, completions: list[Any], prompts: list[Any] | None = None,
                    **kwargs: Any) -> list[Evaluation]:
        texts = [completion_text(c) for c in completions]
        prompts = list(prompts) if prompts is not None else [""] * len(texts)
        state = kwargs.get("trainer_state")
        step = int(getattr(state, "global_step", 0) or 0)
        subjects = kwargs.get("subject")
        key = (step, tuple(texts), tuple(prompt_key(p) for p in prompts),
               tuple(subjects) if subjects else None)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        results: list[Evaluation | None] = [None] * len(texts)
        groups: OrderedDict[str, list[int]] = OrderedDict()
        for i, p in enumerate(prompts):
            groups.setdefault(prompt_key(p), []).append(i)
        base = self.rewarder.config.seed
        more = love_option(self.schedule, step, self.rewarder.config.references, state)
        for key_text, rows in groups.items():
            subject = (subjects[rows[0]] if subjects else None) or self.default_subject
            seed = group_seed(base, step, key_text)
            evaluated = self.rewarder.evaluate_group([texts[i] for i in rows], subject, seed,
                                                     **more)
            for i, e in zip(rows, evaluated):
                e.record.step = step
                results[i] = e
        done: list[Evaluation] = [e for e in results if e is not None]
        self._cache[key] = done
        while len(self._cache) > CACHE_BATCHES:
            self._cache.popitem(last=False)
        self._log(done, kwargs)
        if self.on_evaluations is not None:
            self.on_evaluations(done)
        return done

    @staticmethod
    def _log(done: list[Evaluation], kwargs: dict[str, Any]) -> None:
        log_metric = kwargs.get("log_metric")
        log_extra = kwargs.get("log_extra")
        if log_metric is not None and done:
            n = len(done)
            log_metric("reward/unavailable_frac", sum(e.status == "unavailable"
                                                      for e in done) / n)
            log_metric("reward/rejected_frac", sum(e.status == "rejected" for e in done) / n)
            ok = [e for e in done if e.status == "ok"]
            if ok:
                log_metric("paint_fraction", mean(e.verdict.paint_fraction for e in ok
                                                  if e.verdict is not None))
                log_metric("n_shapes", mean(e.verdict.n_shapes for e in ok
                                            if e.verdict is not None))
                mus = [e.record.components["hps"].details.get("mu") for e in ok
                       if "hps" in e.record.components]
                mus = [m for m in mus if m is not None]
                if mus:
                    log_metric("hps_mu", mean(mus))
        if log_extra is not None and done:
            log_extra("reward_status", [e.status for e in done])
            log_extra("references", [",".join(e.record.reference_ids) for e in done])
