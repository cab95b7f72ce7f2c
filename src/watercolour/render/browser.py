"""Finding and launching Chromium with flags that make software rendering fast and exact.

Why these flags (measured on a 2-core machine without a GPU, see the book's "The medium"):
``--use-angle=swiftshader`` alone also puts the 2D canvas on the software GPU, and p5.brush
paints every watercolour fill as many translucent 2D-canvas paths, so one render took 43-96 s.
With the 2D canvas on the CPU and WebGL on Mesa's llvmpipe the shipped example sketches take
about 3 s (a lighter 30-fill flower ~1.4 s), nearly all of it p5.brush's own work, and
repeated renders are pixel-identical (``benchmarks/render_profile.py`` says where the time goes).
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

DEBIAN_CHROMIUM = "/usr/lib/chromium/chromium"
"""The real binary; /usr/bin/chromium is a wrapper script that adds flags of its own."""

COMMON_ARGS = [
    "--no-sandbox",
    "--disable-dev-shm-usage",
    "--disable-accelerated-2d-canvas",
    "--disable-gpu-rasterization",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--mute-audio",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--disable-features=Translate,MediaRouter,OptimizationHints,BackForwardCache",
]

GL_ARGS = {
    "llvmpipe": ["--use-gl=angle", "--use-angle=gl-egl", "--ignore-gpu-blocklist"],
    "swiftshader": ["--use-angle=swiftshader", "--enable-unsafe-swiftshader"],
    "gpu": ["--ignore-gpu-blocklist"],
}


def find_chromium(explicit: str | None = None) -> str | None:
    """The Chromium binary to launch: an explicit path, ``WATERCOLOUR_CHROMIUM``, Debian's
    Chromium, or None (Playwright's own browser)."""
    candidate = explicit or os.environ.get("WATERCOLOUR_CHROMIUM")
    if candidate:
        if not Path(candidate).exists():
            raise FileNotFoundError(f"Chromium binary not found: {candidate}")
        return candidate
    if Path(DEBIAN_CHROMIUM).exists():
        return DEBIAN_CHROMIUM
    return shutil.which("chromium") or shutil.which("chromium-browser")


def mesa_llvmpipe_available() -> bool:
    """Whether Mesa's software GL driver (Debian ``libgl1-mesa-dri``) is installed."""
    roots = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"]
    for root in roots:
        for name in ("dri/swrast_dri.so", "dri/llvmpipe_dri.so", "libEGL_mesa.so.0"):
            if Path(root, name).exists():
                return True
    return False


PREDECESSOR_ARGS = ["--no-sandbox", "--use-angle=swiftshader"]
"""The published reproduction's browser: SwiftShader for everything, 2D canvas included."""


def launch_args(
    gl: str, js_heap_mb: int, marker: str, extra: list[str], flags: str = "fast"
) -> list[str]:
    """Command-line flags for one browser. ``marker`` tags the process so it can be killed."""
    if flags == "predecessor":
        return [*PREDECESSOR_ARGS, f"--watercolour-worker={marker}", *extra]
    return [
        *COMMON_ARGS,
        *GL_ARGS[gl],
        f"--js-flags=--max-old-space-size={js_heap_mb}",
        f"--watercolour-worker={marker}",
        *extra,
    ]


def kill_marked(marker: str) -> int:
    """Kill every process whose command line carries ``--watercolour-worker=marker``.

    The last resort when a browser no longer answers: Playwright does not expose its pid.
    Returns how many processes were signalled.
    """
    needle = f"--watercolour-worker={marker}".encode()
    killed = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if needle in cmdline:
            try:
                os.kill(int(proc.name), signal.SIGKILL)
                killed += 1
            except OSError:
                pass
    return killed


WEBGL_PROBE = """() => {
  const c = document.createElement('canvas');
  const gl = c.getContext('webgl2');
  if (!gl) return null;
  const ext = gl.getExtension('WEBGL_debug_renderer_info');
  return ext ? gl.getParameter(ext.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);
}"""


def classify_backend(renderer: str | None) -> str:
    """``llvmpipe`` | ``swiftshader`` | ``gpu`` | ``none`` from WebGL's renderer string."""
    if not renderer:
        return "none"
    lowered = renderer.lower()
    if "llvmpipe" in lowered:
        return "llvmpipe"
    if "swiftshader" in lowered:
        return "swiftshader"
    return "gpu"
