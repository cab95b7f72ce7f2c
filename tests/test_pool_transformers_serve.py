"""The OpenAI-compatible painter against a real server: ``transformers serve`` with a tiny
Qwen3-architecture model built here from a config (random weights, a tokenizer trained on the
procedural painter's sketches). Nothing is downloaded."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from serving import transformers_server

from watercolour.openai_compat import ChatClient, ModelsNotServed
from watercolour.pool import procedural
from watercolour.pool.build import BuildConfig, build_pool
from watercolour.pool.painters import OpenAIPainter, PaintRequest, model_painters
from watercolour.pool.schema import PoolValidationError

pytestmark = pytest.mark.slow
transformers = pytest.importorskip("transformers")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_tiny_model(folder: Path) -> Path:
    """A 1-layer Qwen3 with a byte-level BPE tokenizer and a chat template, saved locally."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    corpus = [procedural.generate(s, size=256).code for s in range(12)]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>",
                                   eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)
    config = Qwen3Config(vocab_size=len(fast), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                         head_dim=16, max_position_embeddings=4096,
                         eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id,
                         tie_word_embeddings=True)
    Qwen3ForCausalLM(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def served_model(tmp_path_factory):
    folder = build_tiny_model(tmp_path_factory.mktemp("tiny-model"))
    with transformers_server(folder, startup_timeout_s=300) as url:
        yield f"{url}/v1", str(folder)


def test_chat_completion_from_a_real_server(served_model):
    base_url, model = served_model
    with urllib.request.urlopen(base_url + "/models", timeout=10) as r:
        ids = [m["id"] for m in json.load(r)["data"]]
    assert model in ids
    client = ChatClient(base_url, model=model, timeout_s=60, retries=1)
    reply = client.complete([{"role": "user", "content": "Paint a hibiscus."}],
                            max_tokens=8, seed=1)
    assert reply.usage["completion_tokens"] <= 8
    assert reply.finish_reason in ("length", "stop")
    assert reply.model == model


def test_painter_ids_are_checked_against_a_real_servers_model_list(served_model):
    base_url, model = served_model
    assert ChatClient(base_url, api_key="local").models().count(model) == 1
    assert [p.client.model for p in model_painters([model], base_url=base_url,
                                                   api_key="local")] == [model]
    with pytest.raises(ModelsNotServed, match="does not serve org/not-here"):
        model_painters([model, "org/not-here"], base_url=base_url, api_key="local")


@pytest.mark.browser
def test_painter_and_build_against_transformers_serve(served_model, renderer, tmp_path):
    base_url, model = served_model
    painter = OpenAIPainter(ChatClient(base_url, model=model, timeout_s=120, retries=1),
                            max_tokens=16, name="tiny")
    reply = painter.paint(PaintRequest("a peach hibiscus", seed=4, size=256))
    assert reply.meta["model"] == model and reply.meta["usage"]["completion_tokens"] <= 16
    # random weights write no sketch; the build records that as the sketch's failure
    config = BuildConfig(out=str(tmp_path / "b"), size=1, rounds=2, canvas=128, negatives=0,
                         progress=False)
    with pytest.raises(PoolValidationError, match="no rows"):
        build_pool(config, painters=[painter], renderer=renderer)
    records = [json.loads(line) for line in
               (tmp_path / "b" / "log" / "generations.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == ["tiny-0000-r1", "tiny-0000-r2"]
    assert all(r["status"] == "no_sketch" and r["issues"] == ["broken"] for r in records)
    assert records[1]["painter_meta"]["model"] == model
