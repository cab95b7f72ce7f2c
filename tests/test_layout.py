"""The package's layers: imports run one way, down the pipeline, and no modules import each
other in a circle (measured with grimp on ``src/watercolour``, imports under
``TYPE_CHECKING`` and inside functions included: a type-only or deferred import is still a
dependency a reader must follow).

    base modules <- render <- gates | prompt <- pool <- rewards <- env | analysis <- models
        <- train <- book (with notebooks.py) <- cli <- __main__

The known exceptions are listed below by name. The test fails on any new circle or upward
import, and also when a listed exception is gone, so that the list only ever shrinks: delete
its entry in the same commit that removes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

import pytest

grimp = pytest.importorskip("grimp")

PACKAGE = "watercolour"


@dataclass(frozen=True)
class Layer:
    """Top-level parts of the package (subpackages or modules) at one height. ``independent``:
    the parts must not import each other either."""

    parts: tuple[str, ...]
    independent: bool = False


LAYERS = (
    # Bottom first. The base modules know nothing of the pipeline; they may import each other.
    Layer(("errors", "settings", "cache", "io", "jsonl", "javascript", "lazy", "retry",
           "openai_compat", "examples", "flags", "results",
           "reader")),  # a notebook's first cell: installing, quieting warnings
    Layer(("render",)),
    Layer(("gates", "prompt"), independent=True),  # the checks; the system prompt
    Layer(("pool",)),
    Layer(("rewards",)),
    Layer(("env", "analysis"), independent=True),  # the server; curves, tables, galleries
    # the model zoo: the names, and how each model is built (the tiny painter's revision
    # examples are critiqued as the environment critiques)
    Layer(("models",)),
    Layer(("train",)),
    # notebooks.py is the book's public face (every chapter's install cell imports it,
    # nothing below the book does): it belongs to the book's layer.
    Layer(("book", "notebooks")),
    Layer(("cli",)),
    Layer(("__main__",)),
)

KNOWN_CIRCLES: tuple[frozenset[str], ...] = ()
"""Module circles (strongly connected sets, names without the package's prefix) that exist
today and are to go. Nothing may be added here."""

KNOWN_UPWARD: frozenset[tuple[str, str]] = frozenset()
"""Imports (importer, imported) that run up the layers today and are to go. Nothing may be
added here."""


@cache
def import_graph() -> dict[str, frozenset[str]]:
    """Each module of the package (its name without the package's prefix) -> the package's
    modules it imports."""
    graph = grimp.build_graph(PACKAGE, cache_dir=None)
    prefix = PACKAGE + "."
    inside = {m for m in graph.modules if m.startswith(prefix)}
    return {m.removeprefix(prefix): frozenset(i.removeprefix(prefix) for i in
                                              graph.find_modules_directly_imported_by(m)
                                              if i in inside)
            for m in inside}


def circles(graph: Mapping[str, Iterable[str]]) -> set[frozenset[str]]:
    """The graph's strongly connected sets of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.add(member)
                        if member == node:
                            break
                    if len(members) > 1:
                        found.add(frozenset(members))
    return found


def part(module: str) -> str:
    """The top-level part a module belongs to (``rewards.mix`` -> ``rewards``)."""
    return module.split(".")[0]


def height(name: str) -> tuple[int, Layer]:
    """A top-level part's layer and its position, bottom 0."""
    for position, layer in enumerate(LAYERS):
        if name in layer.parts:
            return position, layer
    raise KeyError(name)


def wrong_way(graph: Mapping[str, Iterable[str]]) -> set[tuple[str, str]]:
    """Imports that run up the layers, or across a layer of independent parts."""
    found = set()
    for importer, imported in graph.items():
        for target in imported:
            (low, layer), (high, _) = height(part(importer)), height(part(target))
            if high > low or (high == low and layer.independent
                              and part(importer) != part(target)):
                found.add((importer, target))
    return found


def test_every_part_of_the_package_has_a_layer():
    unplaced = sorted({part(m) for m in import_graph()} - {p for layer in LAYERS
                                                          for p in layer.parts})
    assert not unplaced, f"place these in tests/test_layout.py's LAYERS: {unplaced}"


def test_no_new_circle_and_no_known_circle_gone():
    measured = circles(import_graph())
    new = measured - set(KNOWN_CIRCLES)
    assert not new, ("modules that import each other in a circle: "
                     + "; ".join(" <-> ".join(sorted(c)) for c in new))
    gone = set(KNOWN_CIRCLES) - measured
    assert not gone, ("a known circle is gone: delete it from KNOWN_CIRCLES: "
                      + "; ".join(" <-> ".join(sorted(c)) for c in gone))


def test_no_new_upward_import_and_no_known_one_gone():
    measured = wrong_way(import_graph())
    new = measured - KNOWN_UPWARD
    assert not new, "imports that run up the layers: " + "; ".join(
        f"{a} -> {b}" for a, b in sorted(new))
    gone = KNOWN_UPWARD - measured
    assert not gone, "a known upward import is gone: delete it from KNOWN_UPWARD: " + "; ".join(
        f"{a} -> {b}" for a, b in sorted(gone))


def test_the_checks_find_what_they_look_for():
    graph = {"render.a": {"gates.b"}, "gates.b": {"render.a"}, "env.c": {"analysis.d"},
             "analysis.d": set(), "pool.e": {"errors"}, "errors": set()}
    assert circles(graph) == {frozenset({"render.a", "gates.b"})}
    assert wrong_way(graph) == {("render.a", "gates.b"), ("env.c", "analysis.d")}
