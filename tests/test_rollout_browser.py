"""The ipywidgets rollout browser: sort, filter by status and violation, a rollout's render,
breakdown and sketch, and its group beside it."""

from __future__ import annotations

import io

from PIL import Image

from watercolour.analysis import RolloutBrowser


def _png(shade: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (shade, 0, 0)).save(buffer, format="PNG")
    return buffer.getvalue()


def _dataset(tmp_path):
    import datasets

    rows = []
    for step in range(3):
        for index in range(3):
            reward = None if (step, index) == (1, 1) else round(0.1 * (step * 3 + index), 2)
            status = "unavailable" if reward is None else ("rejected" if index == 0 else "ok")
            rows.append({"step": step, "group": 0, "index": index, "seed": step * 10 + index,
                         "sketch": f"// {step}.{index}", "png": _png(10 * (step * 3 + index)),
                         "reward": reward, "components": {"gate": 1.0, "judge": reward or 0.0},
                         "status": status, "paint_fraction": 0.2, "n_shapes": index,
                         "violations": ["blank canvas"] if status == "rejected" else [],
                         "references": ["love-0"]})
    folder = tmp_path / "rollouts"
    datasets.Dataset.from_list(rows).save_to_disk(str(folder))
    return folder, rows


def test_the_browser_sorts_filters_and_shows_a_rollout_with_its_group(tmp_path):
    folder, _ = _dataset(tmp_path)
    browser = RolloutBrowser.from_path(folder)
    assert len(browser.choice.options) == 9
    assert browser.choice.options[0][0].startswith("step 0 · #0")
    browser.sort.value = "reward, highest first"
    best = browser.filtered().iloc[0]
    assert best["reward"] == 0.8 and browser.choice.value == browser.filtered().index[0]
    assert browser.image.value == _png(80)  # the shown render is that rollout's
    assert "0.800" in browser.details.value and browser.sketch.value == "// 2.2"
    assert len(browser.group.children) == 3  # its group of 3, side by side
    browser.status.value = "rejected"
    assert [label for label, _ in browser.choice.options] == [
        "step 2 · #0 · 0.600 · rejected", "step 1 · #0 · 0.300 · rejected",
        "step 0 · #0 · 0.000 · rejected"]
    assert "blank canvas" in browser.details.value
    browser.status.value = "(all)"
    browser.violation.value = "blank canvas"
    assert len(browser.choice.options) == 3
    browser.violation.value = "(all)"
    browser.status.value = "unavailable"
    assert len(browser.choice.options) == 1 and "–" in browser.choice.options[0][0]
    assert browser.status.options == ("(all)", "ok", "rejected", "unavailable")
