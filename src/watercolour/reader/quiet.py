"""The libraries' warnings a chapter's page should not show: ones that say nothing about the
book's code or its reader's machine, filtered where they arise (each chapter's kernel, by its
install cell: :func:`watercolour.notebooks.install`), by category and message, each with why.

Imports nothing outside the standard library: the install cell runs it before the package's
dependencies exist.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownWarning:
    """A library warning the book filters, and why."""

    category: type[Warning]
    message: str
    """A regular expression matched against the start of the warning's message."""
    why: str


KNOWN_WARNINGS = (
    KnownWarning(
        UserWarning, r"'pin_memory' argument is set as true but no accelerator is found",
        "torch's DataLoader, on a machine without a GPU: the trainer's default "
        "(dataloader_pin_memory) asks to pin batches for a GPU; with none, nothing is pinned "
        "and nothing is wrong. The CPU chapters (06, 07) train in the kernel, so every "
        "DataLoader they make would print it."),
    KnownWarning(
        FutureWarning, r"`is_gradient_checkpointing` is deprecated",
        "raised by transformers 5 when TRL's GRPO trainer reads the old attribute while it "
        "generates (trl.models.utils.unwrap_model_for_generation): a deprecation between two "
        "libraries, in none of this package's code; it goes when TRL reads the new name."),
)


def filter_known_warnings(known: tuple[KnownWarning, ...] = KNOWN_WARNINGS) -> None:
    """Ignore each of ``known`` (its category and message) in this process."""
    for warning in known:
        warnings.filterwarnings("ignore", message=warning.message, category=warning.category)
