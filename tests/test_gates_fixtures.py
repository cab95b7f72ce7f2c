"""Every fixture gets its expected verdict, rendered in a real browser; the shipped examples
pass in both modes."""

from __future__ import annotations

import pytest
from gates_support import CASES, fixture_text

from watercolour.examples import load_examples
from watercolour.gates import check, matches_expected

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixture_verdict(name, renderer):
    case = CASES[name]
    verdict = check(fixture_text(name), renderer, mode="library", deadline_s=case.deadline_s)
    assert not verdict.infrastructure_failure, verdict.notes
    assert matches_expected(verdict, case), (verdict.violations, verdict.reasons, verdict.notes)
    in_allowlist = verdict.for_mode("allowlist")
    assert matches_expected(in_allowlist, case), (in_allowlist.violations, in_allowlist.reasons)
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
    assert evidence["raw_gl_calls"] == {} and evidence["dynamic_code"] == 0
    assert evidence["tampering"] == []
