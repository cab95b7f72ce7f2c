"""Example sketches shipped with the package: realistic p5.brush watercolours that use only the
10 allowlisted methods. They are the renderer benchmark's fixed set and the book's first figures."""

from __future__ import annotations

from importlib import resources


def example_names() -> list[str]:
    """Names of the shipped examples, sorted."""
    files = resources.files("watercolour.examples").iterdir()
    return sorted(f.name[:-3] for f in files if f.name.endswith(".js"))


def load_example(name: str) -> str:
    """The source of one example sketch."""
    if name not in example_names():
        raise KeyError(f"no example sketch named {name!r}; choose from {example_names()}")
    return resources.files("watercolour.examples").joinpath(f"{name}.js").read_text("utf-8")


def load_examples() -> dict[str, str]:
    """All examples, name -> source."""
    return {name: load_example(name) for name in example_names()}
