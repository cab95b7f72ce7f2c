"""Critics: written feedback on a render, for the next refinement round.

Two implementations of one interface (:class:`Critic`):

- :class:`OfflineCritic` (the embedded default): reads image measurements
  (:func:`watercolour.pool.measure.painting_measures`) and turns them into named issues, a score in
  0..1 and a few sentences. No model, no network.
- :class:`OpenAICritic`: a vision model behind any OpenAI-compatible chat endpoint
  (Inference Providers' router, vLLM, ``transformers serve``) sees the render and writes the
  feedback; issues are read from its words.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from watercolour.openai_compat import ChatClient, EmptyReply
from watercolour.pool.measure import painting_measures


@dataclass
class CritiqueRequest:
    subject: str
    """What was asked for: ``"a peach hibiscus"``."""
    png: bytes | None
    """The render; None when the sketch produced no picture."""
    round: int = 1
    sketch: str = ""
    error: str | None = None
    """Why there is no picture (the sketch's error, a timeout, no code in the reply)."""


@dataclass
class Critique:
    text: str
    issues: list[str] = field(default_factory=list)
    """Named problems (see :data:`watercolour.pool.procedural.ISSUES`, plus ``broken``)."""
    score: float | None = None
    """0..1 from measurements; None from critics that do not score."""
    measurements: dict[str, float] = field(default_factory=dict)
    critic: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "issues": list(self.issues), "score": self.score,
                "measurements": dict(self.measurements), "critic": self.critic}


class Critic(Protocol):
    name: str

    def critique(self, request: CritiqueRequest) -> Critique: ...


# ---------------------------------------------------------------- offline


def _ramp(x: float, lo: float, hi: float) -> float:
    """0 below ``lo``, 1 above ``hi``, linear between."""
    if hi == lo:
        return float(x >= hi)
    return max(0.0, min(1.0, (x - lo) / (hi - lo)))


SCORE_WEIGHTS: dict[str, float] = {
    "coverage": 0.2, "light": 0.15, "colour": 0.2, "depth": 0.1, "layering": 0.15,
    "centred": 0.1, "edges": 0.1,
}


def score_measurements(m: dict[str, float]) -> tuple[float, dict[str, float]]:
    """A 0..1 score from measurements, and its parts (each 0..1, weights
    :data:`SCORE_WEIGHTS`). It rewards what the prompt asks for: enough paint but not a
    flooded sheet, light translucent colour, clean hues, visible layering, a composed subject."""
    pf = m["paint_fraction"]
    parts = {
        "coverage": _ramp(pf, 0.02, 0.12) * (1 - _ramp(pf, 0.55, 0.85)),
        "light": _ramp(m["paint_luminance"], 0.6, 0.8),
        "colour": _ramp(m["paint_chroma"], 0.04, 0.16),
        "depth": _ramp(m["depth"], 0.04, 0.14),
        "layering": _ramp(m["tonal_range"], 0.1, 0.22),
        "centred": 1 - _ramp(m["centre_offset"], 0.3, 0.7),
        "edges": 1 - _ramp(m["edge_paint"], 0.03, 0.15),
    }
    if pf < 0.002:
        return 0.0, parts
    total = sum(SCORE_WEIGHTS[k] * v for k, v in parts.items()) / sum(SCORE_WEIGHTS.values())
    return round(total, 4), {k: round(v, 4) for k, v in parts.items()}


ISSUE_PENALTY = 0.85
"""The offline critic's score is the measurement score times this, once per issue found."""

THRESHOLDS: dict[str, float] = {
    "blank": 0.002, "faint_depth": 0.05, "sparse": 0.06, "crowded": 0.6, "dark": 0.74,
    "grey": 0.05, "muddy": 0.1, "flat": 0.15, "off_centre": 0.45, "edge": 0.08,
}
"""Where a measurement becomes an issue (calibrated on the procedural painter's variants)."""

SENTENCES: dict[str, str] = {
    "broken": "The sketch did not produce a picture{detail}. Keep to the ten brush methods, "
              "define setup() and draw(), and make sure every shape is closed.",
    "blank": "The canvas is blank: nothing was painted. Fill shapes with brush.fill before "
             "drawing them.",
    "faint": "The paint is so faint it barely shows. Use stronger colour (higher alpha) in "
             "the inner layers.",
    "sparse": "The subject is small and lost on the paper ({pf:.0%} painted). Make the flower "
              "larger and let it fill the middle of the sheet.",
    "crowded": "The sheet is flooded with paint ({pf:.0%} covered). Leave some white paper "
               "around the subject.",
    "dark": "The colours are heavy and dark. Watercolour glows when light washes come first: "
            "lighten the palette and lower the opacity of the first layers.",
    "grey": "The painting has no colour. Use the flower's own hues.",
    "muddy": "The colours look muddy, as if over-mixed. Keep each layer to one clean hue and "
             "let the paper show through.",
    "flat": "Each petal is one flat pass. Paint each petal two or three times: first a large "
            "pale wash, then a smaller, more opaque one inside it.",
    "off_centre": "The flower is pushed against the edge of the sheet. Bring it back towards "
                  "the centre.",
}


def issues_from_measurements(m: dict[str, float]) -> list[str]:
    """Named problems, the most serious first."""
    t = THRESHOLDS
    pf = m["paint_fraction"]
    if pf < t["blank"]:
        return ["blank"]
    issues = []
    if m["depth"] < t["faint_depth"]:
        issues.append("faint")
    if pf < t["sparse"]:
        issues.append("sparse")
    if pf > t["crowded"]:
        issues.append("crowded")
    if m["centre_offset"] > t["off_centre"] or m["edge_paint"] > t["edge"]:
        issues.append("off_centre")
    if m["paint_chroma"] < t["grey"]:
        issues.append("grey")
    elif m["paint_chroma"] < t["muddy"]:
        issues.append("muddy")
    if m["paint_luminance"] < t["dark"]:
        issues.append("dark")
    if m["tonal_range"] < t["flat"] and "faint" not in issues:
        issues.append("flat")
    return issues


class OfflineCritic:
    """Feedback from image measurements: the embedded default critic."""

    name = "offline"

    def critique(self, request: CritiqueRequest) -> Critique:
        if request.png is None:
            detail = f" ({request.error.splitlines()[0][:200]})" if request.error else ""
            return Critique(SENTENCES["broken"].format(detail=detail), ["broken"], 0.0, {},
                            self.name)
        m = painting_measures(request.png)
        score, parts = score_measurements(m)
        issues = issues_from_measurements(m)
        score = round(score * ISSUE_PENALTY ** len(issues), 4)
        sentences = [SENTENCES[i].format(pf=m["paint_fraction"]) for i in issues]
        if not issues:
            sentences = [f"A good watercolour of {request.subject}: translucent layers, clean "
                         "colour, a composed subject. Keep it and refine the details."]
        measured = {k: round(v, 4) for k, v in m.items()} | {f"score_{k}": v
                                                            for k, v in parts.items()}
        return Critique(" ".join(sentences), issues, score, measured, self.name)


# ---------------------------------------------------------------- model critic

CRITIC_PROMPT = (
    "You are a watercolour teacher. This is a render of a p5.brush sketch meant to paint "
    "{subject} in loose watercolour. In three to five sentences, say what works and what "
    "to change in the next version: composition (is the flower centred and large enough?), "
    "colour (clean or muddy, too dark or too faint?), layering (large pale washes first, then "
    "smaller, more opaque glazes inside them). Be concrete."
)

_KEYWORDS: list[tuple[str, str]] = [
    ("blank", r"\b(blank|empty canvas|nothing (is )?(painted|visible))\b"),
    ("faint", r"\b(faint|barely visible|washed[- ]out)\b"),
    ("sparse", r"\b(too small|tiny|sparse|lost on|larger|bigger)\b"),
    ("crowded", r"\b(crowded|flooded|too much paint|cluttered)\b"),
    ("dark", r"\b(too dark|heavy|dark and|overly dark|lighten)\b"),
    ("grey", r"\b(grey|gray|no colou?r|monochrome)\b"),
    ("muddy", r"\b(muddy|mud|over-?mixed|dull)\b"),
    ("flat", r"\b(flat|no layer|single (pass|layer)|lacks? depth)\b"),
    ("off_centre", r"\b(off[- ]cent(re|er)|edge of the (sheet|canvas|page)|cropped|cut off)\b"),
]


def issues_from_text(text: str) -> list[str]:
    """Issues named in a critic's words (for critics that do not name them)."""
    lowered = text.lower()
    return [name for name, pattern in _KEYWORDS if re.search(pattern, lowered)]


class OpenAICritic:
    """A vision model's feedback through an OpenAI-compatible chat endpoint.

    The render goes in as a ``data:image/png;base64`` URL. The offline critic still measures
    the render (its score and measurements are kept beside the model's words), and its words
    stand in when the model answers without content (the ``critic`` field says why).
    """

    def __init__(self, client: ChatClient, prompt: str = CRITIC_PROMPT,
                 max_tokens: int = 400) -> None:
        self.client = client
        self.prompt = prompt
        self.max_tokens = max_tokens
        self.name = f"openai:{client.model}"
        self._offline = OfflineCritic()

    def critique(self, request: CritiqueRequest) -> Critique:
        measured = self._offline.critique(request)
        if request.png is None:
            return Critique(measured.text, measured.issues, 0.0, {}, self.name)
        url = "data:image/png;base64," + base64.b64encode(request.png).decode("ascii")
        messages = [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": url}},
            {"type": "text", "text": self.prompt.format(subject=request.subject)},
        ]}]
        try:
            reply = self.client.complete(messages, max_tokens=self.max_tokens,
                                         temperature=0.3)
        except EmptyReply as empty:  # the model's failure: the measured critique stands in
            return Critique(measured.text, measured.issues, measured.score,
                            measured.measurements, f"{measured.critic} ({self.name}: {empty})")
        text = reply.text.strip()
        return Critique(text, issues_from_text(text), measured.score, measured.measurements,
                        self.name)
