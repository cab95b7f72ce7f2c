"""The static rollout gallery: every rollout with its picture, sortable and filterable offline
in a real headless Chromium."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys

import pytest
from PIL import Image

from watercolour.analysis import published_curve, write_rollout_gallery


def _png(shade: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), (shade, 120, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


def _rows() -> list[dict]:
    rewards = [0.2, 0.9, None, 0.0, 0.5, 0.7]
    rows = []
    for i, reward in enumerate(rewards):
        status = "unavailable" if reward is None else ("rejected" if reward == 0 else "ok")
        rows.append({"step": i // 2, "group": 0, "index": i % 2, "seed": i,
                     "prompt": "p", "completion": "c", "sketch": f"// sketch {i}\nbrush.fill();",
                     "png": _png(40 * i) if status == "ok" else None, "reward": reward,
                     "components": {"gate": 1.0, "hps": reward or 0.0}, "status": status,
                     "violations": ["blank canvas"] if status == "rejected" else [],
                     "paint_fraction": 0.1 * i, "n_shapes": i, "references": ["love-1"]})
    return rows


@pytest.mark.browser
def test_the_gallery_shows_sorts_and_filters_offline(tmp_path):
    import datasets
    from playwright.sync_api import sync_playwright

    from watercolour.render.browser import find_chromium

    folder = tmp_path / "rollouts"
    datasets.Dataset.from_list(_rows()).save_to_disk(str(folder))
    page = write_rollout_gallery(folder, tmp_path / "gallery")
    assert len(list((tmp_path / "gallery" / "images").glob("*.png"))) == 4
    assert "<script src" not in page.read_text() and "http" not in page.read_text()

    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium(), args=["--no-sandbox"])
        try:
            tab = browser.new_page()
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            tab.goto(page.as_uri())
            assert tab.locator("tbody tr").count() == 6
            loaded = tab.evaluate("Array.from(document.images).filter(i => i.naturalWidth > 0)"
                                  ".length")
            assert loaded == 4
            tab.click("th[data-key=reward]")  # highest first
            order = tab.eval_on_selector_all("tbody tr", "rs => rs.map(r => r.dataset.reward)")
            assert order[:4] == ["0.9", "0.7", "0.5", "0.2"] and order[-1] == ""
            tab.click("th[data-key=reward]")  # then lowest first
            order = tab.eval_on_selector_all("tbody tr", "rs => rs.map(r => r.dataset.reward)")
            assert order[0] == "" and order[1:3] == ["0.0", "0.2"]
            tab.select_option("#status", "rejected")
            assert tab.text_content("#shown") == "1"
            assert "blank canvas" in tab.inner_text("tbody tr:not([hidden])")
            tab.select_option("#status", "")
            tab.fill("#step", "2")
            assert tab.text_content("#shown") == "2"
        finally:
            browser.close()
    assert not errors, errors


def test_cli_writes_the_gallery_from_jsonl(tmp_path):
    rows = _rows()
    for row in rows:
        row["png"] = base64.b64encode(row["png"]).decode() if row["png"] else None
    path = tmp_path / "rollouts.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = subprocess.run([sys.executable, "-m", "watercolour", "analyse",
                           str(published_curve("hps-only")), "--rollouts", str(path),
                           "--gallery", str(tmp_path / "g"), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert any("rollout gallery" in n for n in out["notes"])
    assert out["rollouts"]["unavailable"] == 1
    html = (tmp_path / "g" / "index.html").read_text()
    assert html.count("<tr class=") == 6 and html.count('<img src="images/') == 4
    no_rollouts = subprocess.run([sys.executable, "-m", "watercolour", "analyse", "hps-only",
                                  "--gallery", str(tmp_path / "g2")],
                                 capture_output=True, text=True, timeout=120)
    assert no_rollouts.returncode == 2 and "--gallery needs --rollouts" in no_rollouts.stderr
