"""The painters' and critic's chat client: :mod:`watercolour.openai_compat` (one client for
every OpenAI-compatible endpoint), re-exported here for the pool's modules."""

from watercolour.openai_compat import (
    HF_ROUTER,
    ChatClient,
    ChatError,
    ChatReply,
    EmptyReply,
    parse_reply,
)

__all__ = ["HF_ROUTER", "ChatClient", "ChatError", "ChatReply", "EmptyReply", "parse_reply"]
