"""Every fixture gets its expected verdict, rendered in a real browser; the shipped examples
pass in both modes."""

from __future__ import annotations

import pytest
from gates_support import MANIFEST, acceptable, expected, fixture_text

from watercolour.examples import load_examples
from watercolour.gates import check

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_fixture_verdict(name, renderer):
    deadline = MANIFEST[name].get("deadline_s")
    verdict = check(fixture_text(name), renderer, mode="library", deadline_s=deadline)
    assert not verdict.infrastructure_failure, verdict.notes
    assert verdict.violations in acceptable(name), (verdict.reasons, verdict.notes)
    assert verdict.passed == expected(name)["passed"]
    in_allowlist = verdict.for_mode("allowlist")
    assert in_allowlist.violations in acceptable(name, "allowlist"), in_allowlist.reasons
    assert in_allowlist.passed == expected(name, "allowlist")["passed"]
    assert set(verdict.reasons) == set(verdict.violations)
    assert all(verdict.reasons[v] for v in verdict.violations if v != "no_sketch") or \
        verdict.violations == ["no_sketch"]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(load_examples()))
def test_shipped_examples_pass_in_both_modes(name, renderer):
    verdict = check(load_examples()[name], renderer, mode="allowlist", deadline_s=90)
    assert verdict.passed, verdict.reasons
    assert verdict.for_mode("library").passed
    assert verdict.outside_allowlist == [] and verdict.n_shapes >= 5
    evidence = verdict.render.evidence
    assert not evidence["p5_calls"] and not evidence["raw_2d_calls"]
    assert evidence["gl_draw_calls"] == 0 and evidence["dynamic_code"] == 0
