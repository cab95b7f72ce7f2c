"""A vision policy sees its render: which policies count as one, the processor that puts a
picture into its conversation, and the image inputs of the forward pass of an episode batch
(:mod:`watercolour.train.episodes` puts the render into the revision turn; the trainer,
:class:`watercolour.train.trainer.WatercolourGRPOTrainer`, feeds it to the loss).

A policy is a **vision policy** when both hold: its model class is a ``...ForConditionalGeneration``
with a vision tower (a ``vision_config``: Qwen3.5's ``model.visual``), and a processor with an
``image_processor`` loads for it. A text model (the tiny Qwen3, SmolLM2) is not one, whatever
its tokenizer. For Qwen3.5 (``qwen3_5``, ``qwen3_5_moe``) without a loadable processor (the
miniatures ship a tokenizer only; transformers' ``AutoProcessor`` also wants torchvision for
the video processor) the processor is built here: Qwen3-VL's processor, images only, with the
published Qwen3.5 image settings (:data:`QWEN35_IMAGES`) and transformers' PIL image backend.

The image inputs follow Qwen's layout (``pixel_values`` as patch rows, ``image_grid_thw`` one row
per image, ``mm_token_type_ids`` 1 on the image's pad tokens), the one TRL's VLM code slices
(``GRPOTrainer._get_per_token_logps_and_entropies``).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from itertools import accumulate
from typing import Any

from watercolour.errors import InputError

QWEN35_TYPES = ("qwen3_5", "qwen3_5_moe")
QWEN35_IMAGES: dict[str, Any] = {
    "patch_size": 16, "temporal_patch_size": 2, "merge_size": 2,
    "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5],
    "size": {"shortest_edge": 65_536, "longest_edge": 16_777_216},
}
"""Qwen3.5's published ``preprocessor_config.json`` values (as Qwen3-VL's): 16-pixel patches
merged 2 x 2, so a 512 x 512 render is 256 image tokens (at least 64, from the 65,536-pixel
floor)."""


def has_vision_class(config: Any) -> bool:
    """Whether ``config`` is a ``...ForConditionalGeneration`` with a vision tower."""
    from watercolour.train.plan import has_vision_tower

    names = getattr(config, "architectures", None) or []
    return has_vision_tower(config) and any(n.endswith("ForConditionalGeneration")
                                            for n in names)


def _qwen35_processor(model: str, revision: str | None) -> Any:
    from transformers import AutoTokenizer, Qwen3VLProcessor
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import (
        Qwen2VLImageProcessorPil,
    )

    class RenderProcessor(Qwen3VLProcessor):  # type: ignore[misc]
        """Qwen3-VL's processor without its video processor (no torchvision needed)."""

        def __init__(self, image_processor: Any = None, tokenizer: Any = None,
                     chat_template: Any = None, **kwargs: Any) -> None:
            super().__init__(image_processor, tokenizer, None, chat_template=chat_template,
                             **kwargs)
            self.video_processor = None

        def to_dict(self) -> dict[str, Any]:  # saved as Qwen3-VL's, for AutoProcessor
            return {**super().to_dict(), "processor_class": "Qwen3VLProcessor"}

    tokenizer = AutoTokenizer.from_pretrained(model, revision=revision)
    return RenderProcessor(image_processor=Qwen2VLImageProcessorPil(**QWEN35_IMAGES),
                           tokenizer=tokenizer, chat_template=tokenizer.chat_template)


def vision_processor(model: str, revision: str | None = None) -> Any | None:
    """The processor that shows ``model`` a picture, or None when it is no vision policy
    (module docstring). ``model``: a loadable path or Hub id."""
    from transformers import AutoConfig, AutoProcessor

    config = AutoConfig.from_pretrained(model, revision=revision)
    if not has_vision_class(config):
        return None
    try:
        processor = AutoProcessor.from_pretrained(model, revision=revision)
    except (OSError, ValueError, TypeError, AttributeError, ImportError):
        processor = None  # no preprocessor config, or a video processor needing torchvision
    if getattr(processor, "image_processor", None) is not None:
        return processor
    if getattr(config, "model_type", None) in QWEN35_TYPES:
        return _qwen35_processor(model, revision)
    return None


def shows_render(model: str, wanted: bool | None, vision: bool | None) -> bool | None:
    """Whether an episode run shows the policy its render: ``wanted`` (``--show-render``) when
    given, else whether the policy is a vision one (``vision``; None: not known yet). Asking a
    text policy to see is an error."""
    if wanted and vision is False:
        raise InputError(f"--show-render: {model} is no vision policy (it needs a "
                         "...ForConditionalGeneration with a vision tower and an image "
                         "processor); drop --show-render, or --show-render false")
    return vision if wanted is None else wanted


def png_image(png: bytes) -> Any:
    """A render's PNG as the RGB PIL image a processor takes."""
    from PIL import Image

    return Image.open(io.BytesIO(png)).convert("RGB")


def image_inputs(images: Sequence[Sequence[Any] | None], image_processor: Any,
                 device: Any = None) -> dict[str, Any] | None:
    """The forward pass's image inputs of a batch whose row ``i`` shows ``images[i]`` (PIL
    images, in order; None or empty: none): ``pixel_values``, ``image_grid_thw`` (on
    ``device``) and ``num_images``; None when no row shows one."""
    flat = [image for row in images for image in (row or [])]
    if not flat:
        return None
    out = image_processor(images=flat, return_tensors="pt")
    return {"pixel_values": out["pixel_values"].to(device),
            "image_grid_thw": out["image_grid_thw"].to(device),
            "num_images": [len(row or []) for row in images]}


def rows_inputs(inputs: dict[str, Any], start: int, end: int, input_ids: Any,
                image_token_id: int) -> dict[str, Any]:
    """The image inputs of rows ``start:end`` of ``inputs`` (:func:`image_inputs`), with
    ``mm_token_type_ids`` from those rows' ``input_ids``; empty when those rows show none."""
    counts = list(inputs["num_images"])
    images = [0, *accumulate(counts)]
    first, last = images[start], images[end]
    if first == last:
        return {}
    rows = inputs["image_grid_thw"].prod(-1).tolist()
    patches = [0, *accumulate(rows)]
    return {"pixel_values": inputs["pixel_values"][patches[first]:patches[last]],
            "image_grid_thw": inputs["image_grid_thw"][first:last],
            "num_images": counts[start:end],
            "mm_token_type_ids": (input_ids == image_token_id).long()}
