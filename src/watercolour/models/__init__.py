"""The model zoo: every policy known by name, and how each is built.

Start at :mod:`~watercolour.models.registry`: one table (``MODELS``) from a name to what it
is, its architecture, the function that builds it and the folder it is kept in, and
``resolve(name)``, the lookup every command line uses (``watercolour evaluate NAME``,
``watercolour train --model NAME``, ``watercolour sft --model NAME``).

- :mod:`~watercolour.models.registry`: the names, the model cache (``WATERCOLOUR_CACHE``), a
  policy resolved (a builtin, an adapter over its base, a folder, a Hub id) and loaded.
- :mod:`~watercolour.models.tiny`: the tiny painter (a ~4M Qwen3 warm-started here on compact
  sketches: its sketches, tokenizer, revision examples, warm start) and the random tiny Qwen3.
- :mod:`~watercolour.models.miniature`: random-weight miniatures of Qwen3.5's classes.
- :mod:`~watercolour.models.smollm2`: SmolLM2-135M-Instruct, converted from a package's GGUF.
- :mod:`~watercolour.models.qwen35`: the exact Qwen3.5 tokenizer, offline, with a chat template.
- :mod:`~watercolour.models.architectures`: the published policies' ``config.json`` (no weights)
  and the class TRL loads, built on PyTorch's ``meta`` device.

Training them is :mod:`watercolour.train`'s.
"""
