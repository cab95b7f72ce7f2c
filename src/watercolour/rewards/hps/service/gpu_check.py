"""Check HPSv3 on a GPU machine: CUDA, the model's load time and memory, and its scores on
three generated pictures (a pale layered wash should beat a flat grey block and a blank
sheet). Prints one JSON object; exit 0 when everything ran and the ordering holds.

    python gpu_check.py                 # in the service's environment (start.sh makes it)
    python gpu_check.py --scorer stand-in   # the same checks without weights (no GPU)

Needs the weights from the Hub (MizzenAI/HPSv3) or the Hugging Face cache.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
import time


def pictures() -> dict[str, bytes]:
    from PIL import Image, ImageDraw, ImageFilter

    def png(image) -> bytes:
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        return buffer.getvalue()

    paper = (246, 240, 228)
    blank = Image.new("RGB", (512, 512), paper)
    grey = blank.copy()
    ImageDraw.Draw(grey).rectangle((156, 156, 356, 356), fill=(120, 120, 120))
    wash = Image.new("RGBA", (512, 512), (*paper, 255))
    for i, (colour, alpha, r) in enumerate([((240, 150, 110), 90, 150), ((225, 110, 90), 120, 95),
                                             ((190, 60, 70), 150, 40)]):
        layer = Image.new("RGBA", (512, 512), (0, 0, 0, 0))
        for k in range(5):
            a = k * 2 * math.pi / 5 + i * 0.3
            x, y = 256 + r * 0.6 * math.cos(a), 256 + r * 0.6 * math.sin(a)
            ImageDraw.Draw(layer).ellipse((x - r / 2, y - r / 2, x + r / 2, y + r / 2),
                                          fill=(*colour, alpha))
        wash = Image.alpha_composite(wash, layer.filter(ImageFilter.GaussianBlur(6)))
    return {"wash": png(wash.convert("RGB")), "grey_block": png(grey), "blank": png(blank)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scorer", default="hpsv3", choices=["hpsv3", "stand-in"])
    parser.add_argument("--device", default=None)
    parser.add_argument("--prompt", default="a peach hibiscus, painted in watercolour")
    args = parser.parse_args()
    from app import make_scorer

    report: dict = {"scorer": args.scorer}
    try:
        import torch

        report["cuda"] = torch.cuda.is_available()
        if torch.cuda.is_available():
            report["gpu"] = torch.cuda.get_device_name(0)
            report["gpu_memory_gb"] = round(torch.cuda.get_device_properties(0).total_memory
                                            / 2**30, 1)
    except ImportError:
        report["cuda"] = None
        torch = None
    start = time.monotonic()
    scorer = make_scorer(args.scorer, args.device)
    report["load_s"] = round(time.monotonic() - start, 2)
    if torch is not None and report.get("cuda"):
        report["allocated_gb"] = round(torch.cuda.memory_allocated() / 2**30, 2)
    images = pictures()
    start = time.monotonic()
    scores = scorer.score(list(images.values()), args.prompt)
    report["score_s"] = round(time.monotonic() - start, 3)
    report["scores"] = {name: {"mu": mu, "sigma": sigma}
                        for name, (mu, sigma) in zip(images, scores)}
    mus = {name: mu for name, (mu, _) in zip(images, scores)}
    report["ordering_ok"] = mus["wash"] > mus["grey_block"] and mus["wash"] > mus["blank"]
    print(json.dumps(report, indent=2))
    return 0 if report["ordering_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
