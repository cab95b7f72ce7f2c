"""What importing a package really imports: the third-party modules its import chain reaches.

``hpsv3==1.0.0``'s ``__init__`` reaches ``hpsv3/model/qwen2vl_trainer.py``, which imports
``matplotlib`` and ``torch.utils.tensorboard`` without declaring them; the service then dies
before it binds. This walks the package's source from ``__init__.py`` (statements that run at
import time: module and class bodies, ``if`` / ``with`` / ``try`` blocks, but not function
bodies nor imports guarded by ``except ImportError``), follows its own modules and lists the
distributions the rest need. ``imports.json`` beside this file is its output for the real
wheel; the tests check every distribution in it is declared (by hpsv3 or in
``requirements.txt``) and regenerate it from the wheel when PyPI can be reached::

    pip download --no-deps hpsv3==1.0.0 -d /tmp/hps && python import_graph.py /tmp/hps/*.whl

Standard library only.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import tempfile
import zipfile
from email.parser import Parser
from pathlib import Path

DISTRIBUTION_OF = {
    "PIL": "pillow",
    "yaml": "pyyaml",
    "cv2": "opencv-python",
    "torch.utils.tensorboard": "tensorboard",
}
"""Import names whose distribution has another name (or, for a submodule, another
distribution besides its package's)."""
_GUARDS = {"ImportError", "ModuleNotFoundError"}


def normalise(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _guarded(node: ast.Try) -> bool:
    for handler in node.handlers:
        names = [handler.type] if not isinstance(handler.type, ast.Tuple) else handler.type.elts
        if any(isinstance(n, ast.Name) and n.id in _GUARDS for n in names):
            return True
    return False


def _imports(tree: ast.AST, package: str, module: str, is_init: bool) -> list[str]:
    """Absolute dotted names imported at import time by one module."""
    found: list[str] = []

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = module.split(".")
                    base = parts if is_init else parts[:-1]
                    base = base[:len(base) - (node.level - 1)]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                found.append(stem)
                if stem == package or stem.startswith(package + "."):  # submodules by name
                    found.extend(f"{stem}.{alias.name}" for alias in node.names)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            elif isinstance(node, ast.Try):
                if not _guarded(node):
                    visit(node.body)
                visit(node.orelse)
                visit(node.finalbody)
            elif isinstance(node, (ast.If, ast.With, ast.ClassDef, ast.For, ast.While)):
                visit(node.body)
                visit(getattr(node, "orelse", []))

    visit(tree.body)  # type: ignore[attr-defined]
    return found


def reached(root: Path, package: str) -> dict[str, str]:
    """``{import name: distribution}`` for every third-party import that ``import package``
    runs, walking the source under ``root`` (a folder holding ``package/``)."""
    stdlib = set(sys.stdlib_module_names)
    seen: set[str] = set()
    todo = [package]
    external: dict[str, str] = {}
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        for i in range(1, len(parts)):  # importing a.b.c runs a/__init__, a/b/__init__
            todo.append(".".join(parts[:i]))
        path = root.joinpath(*parts)
        source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        if not source.is_file():
            continue  # a name imported from a module, not a module
        tree = ast.parse(source.read_text(encoding="utf-8"), str(source))
        for target in _imports(tree, package, name, source.name == "__init__.py"):
            top = target.split(".")[0]
            if top == package:
                todo.append(target)
            elif top and top not in stdlib and top != "__future__":
                key = next((k for k in DISTRIBUTION_OF if target == k
                            or target.startswith(k + ".")), top)
                external[key] = normalise(DISTRIBUTION_OF.get(key, top))
    return dict(sorted(external.items()))


def requires(metadata: str) -> list[str]:
    """The distributions a wheel's METADATA declares (names only, normalised)."""
    fields = Parser().parsestr(metadata).get_all("Requires-Dist") or []
    return sorted({normalise(re.split(r"[\s;<>=!~\[(]", f, maxsplit=1)[0]) for f in fields
                   if "extra ==" not in f})


def from_wheel(wheel: Path, package: str = "hpsv3") -> dict[str, object]:
    """What :data:`imports.json` holds, for ``wheel``."""
    with tempfile.TemporaryDirectory() as folder, zipfile.ZipFile(wheel) as archive:
        archive.extractall(folder)
        meta = next(Path(folder).glob("*.dist-info/METADATA")).read_text(encoding="utf-8")
        return {"wheel": wheel.name, "requires_dist": requires(meta),
                "imports": reached(Path(folder), package)}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python import_graph.py hpsv3-1.0.0-py3-none-any.whl", file=sys.stderr)
        return 2
    print(json.dumps(from_wheel(Path(argv[0])), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
