"""Whether a trainer and its environment servers score the same reward.

With ``--env-url`` the trainer sets TRL's reward weights from its own mix and each group's love
count from its own references, while the servers score with theirs. So before the first step
the trainer reads each server's (``GET /reward``: :func:`read_reward_settings`) and
:func:`check_agreement` refuses to start on any difference, naming each setting, both values
and the two ways to fix it. It never adopts a server's value, not even one the user left
unset: the run's log and its ``run.json`` state the reward the trainer was asked for, so that
must be the reward scored.

Compared: the mix (every component's weight), the references a group and the gate mode, and
the servers with one another, on their pool. A references curriculum
(``--references-schedule``) lives in the trainer and is sent with each reset; what a server
must agree to is its pool, which :class:`ServerPool` describes (its paintings' ids by tier),
so the trainer checks its schedule against the pool the server draws from.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import ValidationError

from watercolour import settings
from watercolour.env.models import RewardSettings
from watercolour.errors import SetupError
from watercolour.gates.verdict import GateConfig
from watercolour.rewards import RewardConfig
from watercolour.rewards.mix import TOLERANCE, Mix
from watercolour.rewards.rubric import RUBRIC, WEIGHTED

ROUTE = "/reward"
"""The server's read-only route that answers :class:`RewardSettings`."""


class DisagreementError(SetupError):
    """The trainer's reward settings and a server's differ (one line per difference)."""


@dataclass(frozen=True)
class ServerPool:
    """A server's reference pool as a client sees it: its source and its paintings' ids by
    tier, no images (what :meth:`~watercolour.rewards.curriculum.ReferencesSchedule.check_pool`
    reads)."""

    source: str
    ids: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def tier(self, name: str) -> list[str]:
        """The ids of the tier's paintings."""
        return list(self.ids.get(name, ()))


def http_url(url: str) -> str:
    """A server's base URL over HTTP (``ws://`` -> ``http://``, ``wss://`` -> ``https://``)."""
    url = url.strip().rstrip("/")
    for scheme, http in (("ws://", "http://"), ("wss://", "https://")):
        if url.startswith(scheme):
            return http + url.removeprefix(scheme)
    return url


def read_reward_settings(url: str, headers: Mapping[str, str] | None = None,
                         timeout_s: float = 30.0) -> RewardSettings:
    """The reward settings the server at ``url`` scores with (``GET /reward``, with
    ``headers``: the bearer token).

    Raises:
        DisagreementError: the server cannot be reached, refuses, is older than this route, or
            answers something else.
    """
    address = http_url(url) + ROUTE
    request = urllib.request.Request(address, headers=dict(headers or {}))
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as reply:
            return RewardSettings.model_validate(json.loads(reply.read()))
    except urllib.error.HTTPError as err:
        why = {401: "it refused the token (set WATERCOLOUR_ENV_TOKEN to the server's)",
               404: "it has no /reward route: it is older than this trainer; update it"}
        raise DisagreementError(f"cannot read the reward settings of {url}: "
                                f"{why.get(err.code, f'HTTP {err.code}')}") from None
    except (OSError, ValueError, ValidationError) as err:
        raise DisagreementError(f"cannot read the reward settings of {url} ({address}): "
                                f"{type(err).__name__}: {err}") from None


def mix_flag(mix: Mix) -> str:
    """``mix`` as ``--mix`` takes it: a preset's name, else the weighted components' weights."""
    if mix.name != "custom":
        return mix.name
    return ",".join(f"{c}={mix.weight(c):g}" for c in WEIGHTED)


def mix_variables(mix: Mix) -> str:
    """The server's variables that set ``mix``."""
    return " ".join(f"{c.env}={mix.weight(c.name):g}" for c in RUBRIC if c.env)


def variable(cls: type, name: str) -> str:
    """The ``WATERCOLOUR_*`` variable declared on ``cls``'s field ``name``."""
    return next(env for field_name, env, _, _ in settings.describe(cls) if field_name == name)


def differences(config: RewardConfig, served: RewardSettings, url: str) -> list[str]:
    """Each setting in which the trainer's ``config`` and the server's ``served`` differ: one
    line, with both values and how to make them agree."""
    found = []
    try:
        theirs = Mix(dict(served.mix))
    except ValueError as err:
        return [f"mix: the server at {url} answers weights this trainer cannot read ({err})"]
    ours = config.mix
    if any(abs(ours.weight(c) - theirs.weight(c)) > TOLERANCE for c in WEIGHTED):
        found.append(f"mix: this run {describe_mix(ours)}, the server {describe_mix(theirs)}: "
                     f"give --mix {mix_flag(theirs)}, or start the server with "
                     f"{mix_variables(ours)}")
    if config.references != served.references:
        found.append(f"references: this run {config.references} a group, the server "
                     f"{served.references}: give --references {served.references}, or start "
                     f"the server with {variable(RewardConfig, 'references')}="
                     f"{config.references}")
    if config.gate_mode != served.gate_mode:
        found.append(f"gate mode: this run {config.gate_mode}, the server {served.gate_mode}: "
                     f"give --gate-mode {served.gate_mode}, or start the server with "
                     f"{variable(GateConfig, 'mode')}={config.gate_mode}")
    return found


def describe_mix(mix: Mix) -> str:
    """``judge-led (judge 0.6, hps 0.3, pigment 0)``."""
    return f"{mix.name} ({', '.join(f'{c} {mix.weight(c):g}' for c in WEIGHTED)})"


def check_agreement(config: RewardConfig, served: Mapping[str, RewardSettings]
                    ) -> ServerPool | None:
    """Refuse a trainer whose reward differs from any server's, or servers whose pools differ
    from one another; else the servers' pool (None: they load none).

    Raises:
        DisagreementError: every difference, one line each, with its fix.
    """
    lines = []
    for url, answer in served.items():
        lines += [f"{url}: {line}" for line in differences(config, answer, url)]
    pools = {url: {t: tuple(ids) for t, ids in s.tiers.items()} for url, s in served.items()}
    if len({json.dumps(p, sort_keys=True) for p in pools.values()}) > 1:
        counts = "; ".join(f"{url}: " + (", ".join(f"{t} {len(ids)}" for t, ids in p.items())
                                         or "none") for url, p in pools.items())
        lines.append(f"pool: the servers draw references from different pools ({counts}): "
                     f"start them all with the same {variable(RewardConfig, 'pool')}")
    if lines:
        raise DisagreementError(
            "the environment server scores another reward than this run asks for (TRL's "
            "weights and the love count come from the run's settings):\n  "
            + "\n  ".join(lines))
    first = next(iter(served.values()), None)
    if first is None or first.pool is None:
        return None
    return ServerPool(first.pool, pools[next(iter(served))])
