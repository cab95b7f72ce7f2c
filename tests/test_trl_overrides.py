"""Canaries for the private TRL methods the trainer overrides (``trainer.TRL_OVERRIDES``): each
fails when TRL changes what the override relies on, or fixes what it works around."""

import inspect

from trl import GRPOTrainer

from watercolour.train.trainer import TRL_OVERRIDES, WatercolourGRPOTrainer


def test_every_private_override_is_listed_with_its_reason():
    overridden = {name for name, value in vars(WatercolourGRPOTrainer).items()
                  if callable(value) and name.startswith("_") and not name.startswith("__")
                  and hasattr(GRPOTrainer, name)}
    assert overridden == set(TRL_OVERRIDES)
    assert all("github.com/huggingface/trl/issues/" in why for why in TRL_OVERRIDES.values())


def test_the_overridden_methods_take_what_the_overrides_pass():
    def params(name):
        return list(inspect.signature(getattr(GRPOTrainer, name)).parameters)

    assert params("_generate_single_turn")[:5] == ["self", "prompt_ids", "images",
                                                   "multimodal_fields", "num_generations"]
    assert params("_generate") == ["self", "prompts"]
    assert params("_generate_and_score_completions") == ["self", "inputs"]
    logps = params("_get_per_token_logps_and_entropies")
    assert logps[:5] == ["self", "model", "input_ids", "attention_mask", "logits_to_keep"]
    assert {"batch_size", "compute_entropy", "compute_aux_loss", "pixel_values",
            "image_grid_thw", "num_images"} <= set(logps)


def test_generate_still_returns_completion_ids_second_and_extra_fields_sixth():
    source = inspect.getsource(GRPOTrainer._generate)
    assert ("return prompt_ids, completion_ids, tool_mask, completions, logprobs, extra_fields"
            in source)


def test_trl_still_needs_the_workarounds():
    """When one fails, TRL fixed it: drop the override (and its entry) instead."""
    single_turn = inspect.getsource(GRPOTrainer._generate_single_turn)
    assert "unwrapped_model.generate(" in single_turn
    assert "tokenizer=" not in single_turn  # stop strings: TRL passes no tokenizer (#2820)
    generate = inspect.getsource(GRPOTrainer._generate)
    assert "images = None" in generate  # a rollout_func's images dropped (#5120)
