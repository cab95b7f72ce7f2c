"""The flowers the procedural painter knows: petal outlines, arrangements, palettes.

A subject is data, not code: the painter (:mod:`watercolour.pool.procedural`) reads these
records to lay out petals, centres, stems and leaves. Outlines are in petal-local units: ``u``
runs from the flower's centre (0) to the petal's tip (1), ``v`` across it (-0.5 .. 0.5).
"""

from __future__ import annotations

from dataclasses import dataclass, field

OUTLINES: dict[str, tuple[tuple[float, float], ...]] = {
    # a wide, ruffled fan (hibiscus)
    "broad": ((0, 0), (0.3, -0.28), (0.65, -0.5), (0.92, -0.38), (1.0, -0.1), (0.98, 0.15),
              (0.88, 0.42), (0.62, 0.5), (0.3, 0.26)),
    # a rounded cup (poppy, peony)
    "round": ((0, 0), (0.2, -0.32), (0.52, -0.5), (0.86, -0.42), (1.0, -0.08), (0.97, 0.16),
              (0.84, 0.43), (0.5, 0.5), (0.2, 0.3)),
    # a long, thin strap (daisy, sunflower)
    "narrow": ((0, 0), (0.25, -0.42), (0.7, -0.5), (1.0, 0.0), (0.7, 0.5), (0.25, 0.42)),
    # an almond with a point (lotus, tulip)
    "pointed": ((0, 0), (0.28, -0.45), (0.62, -0.5), (1.0, 0.0), (0.62, 0.5), (0.28, 0.45)),
    # a short petal with a notch in its tip (cherry blossom)
    "notched": ((0, 0), (0.3, -0.4), (0.75, -0.5), (1.0, -0.24), (0.88, 0.0), (1.0, 0.24),
                (0.75, 0.5), (0.3, 0.4)),
    # a leaf: a pointed oval
    "leaf": ((0, 0), (0.25, -0.45), (0.6, -0.5), (1.0, 0.0), (0.6, 0.5), (0.25, 0.45)),
    # a lily pad: nearly round, with a notch
    "pad": ((0, 0), (0.1, -0.48), (0.5, -0.55), (0.9, -0.42), (1.0, 0.0), (0.9, 0.42),
            (0.5, 0.55), (0.1, 0.48)),
}

CURVES: dict[str, float] = {
    "broad": 0.6, "round": 0.7, "narrow": 0.5, "pointed": 0.45, "notched": 0.4, "leaf": 0.5,
    "pad": 0.8,
}
"""``brush.beginShape(curvature)`` per outline: how much the outline is smoothed."""


@dataclass(frozen=True)
class Subject:
    """One kind of flower and how to paint it."""

    key: str
    name: str
    """What the prompt calls it: ``"hibiscus"``, ``"cherry blossom"``."""
    outline: str
    petals: tuple[int, int]
    """Petals per flower (inclusive range)."""
    flowers: tuple[int, int]
    arrangement: str
    """``radial`` (petals all round), ``fan`` (upright petals: tulip, lotus), ``rings``
    (an outer and an inner ring: peony), ``branch`` (small flowers along a twig)."""
    length: float
    """Petal length of the main flower, as a fraction of the canvas."""
    width: float
    """Petal width as a fraction of its length."""
    centre: str
    """``throat`` (hibiscus), ``disc`` (daisy, sunflower), ``eye`` (poppy, cherry), ``pod``
    (lotus), ``none``."""
    stem: bool
    leaves: tuple[int, int]
    palettes: dict[str, dict[str, str]] = field(default_factory=dict)
    fan_spread: float = 0.0
    """Half the angle a fan of petals covers (radians)."""


def _palette(light: str, mid: str, deep: str, centre: str, accent: str,
             leaf_light: str = "#8fb26b", leaf_dark: str = "#4d7a3e",
             stem: str = "#6f8f4a") -> dict[str, str]:
    return {"light": light, "mid": mid, "deep": deep, "centre": centre, "accent": accent,
            "leaf_light": leaf_light, "leaf_dark": leaf_dark, "stem": stem}


SUBJECTS: dict[str, Subject] = {s.key: s for s in (
    Subject(
        "hibiscus", "hibiscus", "broad", (5, 5), (1, 2), "radial", 0.3, 0.9, "throat", False,
        (2, 3), {
            "peach": _palette("#f4b891", "#ee9a72", "#b8323a", "#8e1f2c", "#e9b93c"),
            "red": _palette("#f08a7e", "#e0483f", "#8e1426", "#6d0f1e", "#f2c14e"),
            "pink": _palette("#f6b3c8", "#ec7fa4", "#a3245a", "#7c1742", "#f3d06b"),
            "yellow": _palette("#f9dc8c", "#f2c04a", "#c2452f", "#8f2a22", "#e9873c"),
            "coral": _palette("#f7a98f", "#ef7a5c", "#b0303b", "#7f1d2a", "#f0c75a"),
        }),
    Subject(
        "poppy", "poppy", "round", (4, 5), (1, 3), "radial", 0.22, 1.0, "eye", True, (1, 2), {
            "red": _palette("#f2907a", "#e2442f", "#a81e1e", "#2b1d22", "#3a2c33",
                            "#9fb67a", "#5d7d45"),
            "orange": _palette("#f8b77a", "#f08a32", "#c4521c", "#2e2220", "#4a3a2e",
                               "#9fb67a", "#5d7d45"),
            "pink": _palette("#f7b6bf", "#ec8093", "#bf4566", "#2e2026", "#3d2a33",
                             "#9fb67a", "#5d7d45"),
        }),
    Subject(
        "daisy", "daisy", "narrow", (11, 14), (1, 3), "radial", 0.2, 0.3, "disc", True, (1, 2), {
            "white": _palette("#e9eef5", "#cfd8e6", "#aab7cc", "#f2c640", "#d08a1e"),
            "lilac": _palette("#e2d3f0", "#c6a9e2", "#9a76c4", "#f2c640", "#c9831c"),
        }),
    Subject(
        "sunflower", "sunflower", "narrow", (12, 15), (1, 2), "radial", 0.2, 0.36, "disc", True,
        (1, 2), {
            "gold": _palette("#f8da6a", "#f2bd2f", "#d48a17", "#8a5a2b", "#3b2210",
                             "#9bbd63", "#4f7a33"),
            "lemon": _palette("#faea8c", "#f4d646", "#dca51e", "#6f4a24", "#2f1c0d",
                              "#9bbd63", "#4f7a33"),
        }),
    Subject(
        "tulip", "tulip", "pointed", (3, 4), (1, 3), "fan", 0.27, 0.7, "none", True, (1, 2), {
            "red": _palette("#f4a08c", "#e4553f", "#c22b2b", "#8e1f2c", "#f2c14e"),
            "yellow": _palette("#fbe38a", "#f5c842", "#e39a1c", "#b8661a", "#f2c14e"),
            "violet": _palette("#d8b4e6", "#b27bd0", "#7d45a8", "#5a2d7d", "#f2c14e"),
            "pink": _palette("#f7c1cf", "#ef8fae", "#c9567f", "#9c3560", "#f2c14e"),
        }, fan_spread=0.42),
    Subject(
        "cherry", "cherry blossom", "notched", (5, 5), (3, 4), "branch", 0.1, 0.95, "eye",
        False, (0, 0), {
            "pink": _palette("#f5a9c0", "#ec7fa2", "#d9487a", "#b52a5c", "#f3c94b",
                             stem="#6b4b3e"),
            "white": _palette("#f8dde6", "#f2b8cb", "#e58aa9", "#b9416a", "#f3c94b",
                              stem="#5d463b"),
        }),
    Subject(
        "lotus", "lotus", "pointed", (7, 9), (1, 1), "fan", 0.3, 0.46, "pod", False, (1, 2), {
            "pink": _palette("#f8c9d6", "#ef98b3", "#d25a86", "#e8c250", "#b88a2a",
                             "#86b59a", "#3f7a62"),
            "white": _palette("#f4eef0", "#e6cfd8", "#c98ea6", "#e8c250", "#b88a2a",
                              "#86b59a", "#3f7a62"),
        }, fan_spread=1.25),
    Subject(
        "peony", "peony", "round", (7, 9), (1, 2), "rings", 0.24, 0.95, "eye", False, (2, 3), {
            "pink": _palette("#f7c4cf", "#ee93a8", "#c95a79", "#a83a5e", "#f0d27a"),
            "coral": _palette("#f8c0a8", "#f09577", "#d2604a", "#a8402f", "#f0d27a"),
            "white": _palette("#f5eee9", "#ead6cf", "#d0a9a0", "#c07c86", "#f0d27a"),
        }),
)}

PAPERS = ("#f6f0e4", "#f7f2ea", "#f6f1e7", "#f7f1e3", "#f4efe6")
"""Warm off-white papers, as the example sketches use."""


def find_subject(text: str) -> tuple[Subject, str | None]:
    """The subject a phrase names (``"a peach hibiscus"`` -> hibiscus, palette ``peach``) and
    the palette it names, if any. Unknown flowers fall back to hibiscus, the project's subject."""
    lowered = text.lower()
    subject = next((s for s in SUBJECTS.values() if s.name in lowered or s.key in lowered),
                   SUBJECTS["hibiscus"])
    palette = next((p for p in subject.palettes if p in lowered), None)
    return subject, palette


def subject_phrase(key: str, palette: str) -> str:
    """``("hibiscus", "peach")`` -> ``"a peach hibiscus"``."""
    name = SUBJECTS[key].name
    if key == "cherry":
        return f"a {palette} cherry blossom branch"
    article = "an" if palette[0] in "aeiou" else "a"
    return f"{article} {palette} {name}"
