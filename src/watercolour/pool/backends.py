"""The pool build's backends, chosen in one place for the CLI and the chapters: the painters
(model ids behind an OpenAI-compatible endpoint, else the procedural painter) and the critic
(a vision model, else the offline critic)."""

from __future__ import annotations

from collections.abc import Sequence

from watercolour.pool.critic import Critic, OfflineCritic, OpenAICritic
from watercolour.pool.painters import (
    DEFAULT_PAINTER_MODELS,
    Painter,
    ProceduralPainter,
    model_painters,
)

DEFAULT = "default"
"""The model name that stands for the four default painter models."""


def choose_painters(models: Sequence[str] = (), base_url: str | None = None,
                    vision: bool = False) -> list[Painter]:
    """One painter per model id (``default``: the four default models); no ids: the
    procedural painter."""
    if not models:
        return [ProceduralPainter()]
    ids = [m for name in models for m in (DEFAULT_PAINTER_MODELS if name == DEFAULT else [name])]
    return list(model_painters(ids, base_url=base_url, vision=vision))


def choose_critic(model: str | None = None, base_url: str | None = None) -> Critic:
    """A vision model as the critic (at ``base_url``, default Inference Providers' router);
    no model: the offline critic."""
    if not model:
        return OfflineCritic()
    from watercolour.openai_compat import HF_ROUTER, ChatClient, check_served

    client = ChatClient(base_url or HF_ROUTER, model=model)
    if client.api_key:
        check_served(client, [model])
    return OpenAICritic(client)
