"""Pool validation: clear errors for unknown tiers, undecodable PNGs, empty tiers, duplicates."""

from __future__ import annotations

import pytest
from pool_helpers import png, rows

from watercolour import jsonl
from watercolour.pool.schema import (
    COLUMNS,
    PoolValidationError,
    features,
    png_problem,
    sha256,
    validate_rows,
)


def _rows(items):
    return [{"id": r["id"], "tier": r["tier"], "image": r["png"]} for r in items]


def test_a_valid_pool_passes_and_returns_hashes():
    good = rows(2, 3)
    hashes = validate_rows(_rows(good))
    assert hashes == [sha256(r["png"]) for r in good]


def test_published_columns_are_kept():
    assert list(COLUMNS)[:4] == ["id", "tier", "source_file", "image"]
    assert set(features()) == set(COLUMNS)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda rs: rs[0].update(tier="great"), r"p000: unknown tier 'great'"),
        (lambda rs: rs[1].update(image=b"not a png at all"), r"p001: image is not a PNG"),
        (lambda rs: rs[1].update(image=png(1)[:40]), r"p001: image is not decodable"),
        (lambda rs: rs[1].update(image=None), r"p001: image is no image bytes"),
        (lambda rs: rs[3].update(image=rs[2]["image"]), r"p003: duplicate image \(same sha256 as p002\)"),
        (lambda rs: rs[0].update(sha256="0" * 64), r"p000: sha256 column 000000000000… does not match"),
        (lambda rs: rs[0].pop("tier"), r"p000: missing column\(s\) tier"),
    ],
)
def test_each_problem_has_a_clear_message(change, message):
    items = _rows(rows(2, 3))
    change(items)
    with pytest.raises(PoolValidationError, match=message):
        validate_rows(items, source="test pool")


def test_empty_tiers_and_empty_pools_are_errors():
    with pytest.raises(PoolValidationError, match="tier 'love' is empty"):
        validate_rows(_rows(rows(0, 3)))
    with pytest.raises(PoolValidationError, match="tier 'okay' is empty"):
        validate_rows(_rows(rows(2, 0)))
    with pytest.raises(PoolValidationError, match="no rows"):
        validate_rows([])


def test_every_problem_is_listed():
    items = _rows(rows(1, 3))
    items[0]["tier"] = "meh"  # also leaves love empty
    items[2]["image"] = b"junk"
    with pytest.raises(PoolValidationError) as caught:
        validate_rows(items, source="x")
    problems = caught.value.problems
    assert len(problems) == 3
    assert str(caught.value).startswith("x is not a valid pool: ")


def test_png_problem():
    assert png_problem(png(3)) is None
    assert "signature" in png_problem(b"GIF89a....")


def test_jsonl_survives_a_torn_last_line(tmp_path):
    log = tmp_path / "a.jsonl"
    jsonl.append(log, {"id": 1})
    jsonl.append(log, {"id": 2, "text": "two\nlines"})
    with open(log, "ab") as handle:  # a crash in the middle of writing record 3
        handle.write(b'{"id": 3, "tex')
    assert [r["id"] for r in jsonl.read(log)] == [1, 2]
    jsonl.append(log, {"id": 4})  # the torn line is cut off first
    assert [r["id"] for r in jsonl.read(log)] == [1, 2, 4]
    assert jsonl.read(log)[1]["text"] == "two\nlines"
    log.write_bytes(b'{"id": 1}\nnot json\n{"id": 2}\n')
    with pytest.raises(ValueError, match="line 2 is not JSON"):
        jsonl.read(log)
