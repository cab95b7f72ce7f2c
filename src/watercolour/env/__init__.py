"""The environment as an OpenEnv service: a server that gates, renders and scores replies,
and clients that reach one or several of them.

>>> from watercolour.env import RemoteRewarder
>>> with RemoteRewarder(["http://127.0.0.1:8000"]) as rewarder:
...     rewarder.evaluate_group(replies, subject="a lotus", seed=7)

Modules, in OpenEnv's layout: :mod:`~watercolour.env.models` (action, observation, state),
:mod:`~watercolour.env.client` (the typed ``EnvClient`` and the multi-server
:class:`RemoteRewarder`), :mod:`~watercolour.env.server` (the shared service, the per-session
environment, the app), :mod:`~watercolour.env.config` (``WATERCOLOUR_*`` server settings),
:mod:`~watercolour.env.cache` (same sketch and seed: rendered once),
:mod:`~watercolour.env.agreement` (a trainer and its servers score the same reward) and
:mod:`~watercolour.env.critique` (the multi-turn critique; an episode of several turns:
:func:`play_episode`, the reward rule :data:`EPISODE_REWARD_RULE`). ``openenv.yaml`` and the
``Dockerfile`` beside them deploy it as a Hugging Face Docker Space.
"""

from watercolour.lazy import lazy_attributes

_HOMES = {
    **dict.fromkeys(("DEFAULT_STEP_TIMEOUT_S", "RemoteRewarder", "WatercolourEnv",
                     "from_observation", "play_episode", "render_message", "unavailable"),
                    "client"),
    **dict.fromkeys(("EnvConfig", "EnvConfigError"), "config"),
    **dict.fromkeys(("EPISODE_REWARD_RULE", "MULTI_TURN_DEFAULT", "TurnRecord",
                     "WatercolourAction", "WatercolourObservation", "WatercolourState"),
                    "models"),
}
"""Each public name's module, imported on first use: ``watercolour.env.models`` (what a
training episode needs) loads without the client and its websocket connection."""


__getattr__ = lazy_attributes(__name__, _HOMES)

__all__ = [
    "DEFAULT_STEP_TIMEOUT_S",
    "EPISODE_REWARD_RULE",
    "MULTI_TURN_DEFAULT",
    "EnvConfig",
    "EnvConfigError",
    "RemoteRewarder",
    "TurnRecord",
    "WatercolourAction",
    "WatercolourEnv",
    "WatercolourObservation",
    "WatercolourState",
    "from_observation",
    "play_episode",
    "render_message",
    "unavailable",
]
