"""The OpenAI-compatible judge client against a real local server: ``transformers serve``
with a tiny vision-language model built here from a config (random weights, no download).
Its answers are nonsense, which is exactly the malformed-answer path: every vote is dropped
and the judge term is None (infrastructure), never a guess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rewards_support import painting, pool
from serving import transformers_server

from watercolour.rewards import consistency, draw_references, judge_candidate
from watercolour.rewards.judge.openai_judge import OpenAIJudge

pytestmark = pytest.mark.slow
pytest.importorskip("transformers")  # the train extra

TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}\n"
    "{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}")


def build_tiny_vlm(folder: Path) -> Path:
    """A LLaVA-architecture model a few kilobytes big: a CLIP vision tower on 32 px images,
    one Llama layer, a byte-level BPE tokenizer trained here, a chat template."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    specials = ["<pad>", "<s>", "</s>", "<unk>", "<image>"]
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    corpus = ['{"winner": "A", "reason": "softer edges"}', "Image A: Image B: which"] * 20
    tokenizer.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=300, special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>",
                                   pad_token="<pad>", unk_token="<unk>",
                                   extra_special_tokens={"image_token": "<image>"})
    fast.chat_template = TEMPLATE
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(size={"shortest_edge": 32},
                                           crop_size={"height": 32, "width": 32}),
        tokenizer=fast, patch_size=8, vision_feature_select_strategy="default",
        chat_template=TEMPLATE, image_token="<image>", num_additional_image_tokens=1)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                       num_attention_heads=2, image_size=32, patch_size=8,
                                       projection_dim=16),
        text_config=LlamaConfig(vocab_size=len(fast), hidden_size=16, intermediate_size=32,
                                num_hidden_layers=1, num_attention_heads=2,
                                num_key_value_heads=2, max_position_embeddings=512,
                                bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id,
                                pad_token_id=fast.pad_token_id),
        image_token_index=fast.convert_tokens_to_ids("<image>"), vision_feature_layer=-1,
        vision_feature_select_strategy="default")
    torch.manual_seed(0)
    model = LlavaForConditionalGeneration(config)
    model.generation_config.max_new_tokens = 16
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = build_tiny_vlm(tmp_path_factory.mktemp("tiny-vlm"))
    with transformers_server(folder, startup_timeout_s=240,
                             extra_args=("--log-level", "warning")) as url:
        yield folder, url


def test_nonsense_from_a_real_server_is_dropped_and_the_term_is_none(served):
    folder, url = served
    judge = OpenAIJudge(str(folder), base_url=url + "/v1", timeout_s=120, retries=0,
                        max_tokens=16, max_concurrency=2)
    a, b = painting(1), painting(2, "okay")
    vote = judge.compare(a, b, "a rose")
    assert vote.winner is None and vote.attempts == 1
    assert vote.raw is not None and ("unparseable" in vote.error or "winner" in vote.error)
    refs = draw_references(pool(1, 1), seed=0, n=2)
    result = judge_candidate(judge, a, refs, "a rose")
    assert (result.asked, result.answered, result.score) == (4, 0, None)
    check = consistency(judge, [(a, b)], "a rose", repeats=1)
    assert check["answered_rate"] == 0.0 and check["order_agreement"] is None


def test_the_judge_reaches_a_real_local_server_in_offline_mode(served):
    """``HF_HUB_OFFLINE=1`` (set before anything is imported, as on a training box): the
    request reaches ``transformers serve`` and its answer comes back (nonsense, so the vote
    is unparseable -- not refused, not unreachable)."""
    folder, url = served
    script = ("import sys; from rewards_support import painting\n"
              "from watercolour.rewards.judge.openai_judge import OpenAIJudge\n"
              "judge = OpenAIJudge(sys.argv[2], base_url=sys.argv[1], timeout_s=120, "
              "retries=0, max_tokens=16)\n"
              "vote = judge.compare(painting(1), painting(2, 'okay'), 'a rose')\n"
              "print(repr(vote.raw is not None), judge.structured)\n"
              "print(vote.error)\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([os.path.dirname(__file__), *sys.path])}
    done = subprocess.run([sys.executable, "-c", script, url + "/v1", str(folder)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    answered, error = done.stdout.splitlines()[0], done.stdout.splitlines()[1]
    assert answered.startswith("True"), done.stdout
    assert "unparseable" in error or "winner" in error, error
