"""A running browser's processes, as the benchmarks read them from /proc."""

from __future__ import annotations

from watercolour.render.processes import browser_processes


def test_a_warm_browser_is_found_with_its_children(renderer, small_sketch) -> None:
    future = renderer._submit(small_sketch, 0)
    seen: set[str] = set()
    while not future.done():  # the render's own renderer process lives only while it renders
        seen |= {p.kind for p in browser_processes(renderer._workers[0].marker)}
    assert future.result().ok
    processes = browser_processes(renderer._workers[0].marker)
    assert {"browser", "renderer", "gpu-process"} <= seen
    assert {"browser", "gpu-process"} <= {p.kind for p in processes}
    assert [p.kind for p in processes].count("browser") == 1
    # the next render's context is being prepared meanwhile: its processes come and go, so
    # only the two that stay are asked to hold memory
    assert all(p.rss_bytes > 0 for p in processes if p.kind in ("browser", "gpu-process"))
    assert all(p.cpu_s >= 0 for p in processes)
    assert sum(p.cpu_s for p in processes) > 0


def test_a_browser_that_is_not_running_has_no_processes() -> None:
    assert browser_processes("no-such-worker") == []
