"""The package's layers, read from the source files: the arrows between them point one way.

* bottom: ``topiczoo.errors``, ``topiczoo.memory``, ``topiczoo.metrics`` (and
  ``topiczoo.defaults``, ``topiczoo.modes``), which import nothing of the package above them;
* ``kernels/``: the exact conditional updates, on the bottom layer only;
* ``models/``: the families, on kernels/ and the bottom layer;
* ``diagnostics/``: on models/, kernels/ and the bottom layer;
* the drivers in ``topiczoo/`` (fit, predict, compare, the command line, the estimators and
  what they use), which may import everything below them and are imported by none of it.

A function-local import of a package module in the lower layers is the mark of a dodged
import cycle, so there is none; and no function of kernels/ is a long room.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOTTOM = ("topiczoo.errors", "topiczoo.memory", "topiczoo.metrics", "topiczoo.defaults",
          "topiczoo.modes")
#: What each lower layer may import of the package (itself included).
ALLOWED = {
    "kernels": ("topiczoo.kernels",) + BOTTOM,
    "models": ("topiczoo.models", "topiczoo.kernels") + BOTTOM,
    "diagnostics": ("topiczoo.diagnostics", "topiczoo.models", "topiczoo.kernels") + BOTTOM,
}
#: The longest a function of kernels/ may be, in lines (signature and docstring included).
MAX_KERNEL_FUNCTION_LINES = 120


def _files(folder: str) -> list:
    return sorted((ROOT / folder).rglob("*.py"))


def _imports(path: Path, local_only: bool = False) -> list:
    """(line, module) of every import of a topiczoo module in ``path`` (``from topiczoo import
    x`` names ``topiczoo.x``), only those inside functions with ``local_only``."""
    tree = ast.parse(path.read_text())
    roots = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    found = set()
    for root in roots if local_only else [tree]:
        for node in ast.walk(root):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] if node.module != "topiczoo" else [
                    f"topiczoo.{alias.name}" for alias in node.names]
            else:
                continue
            found.update((node.lineno, n) for n in names if n.startswith("topiczoo"))
    return sorted(found)


def _within(module: str, prefixes) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


@pytest.mark.parametrize("folder, path", [(f, p) for f in ALLOWED for p in _files(f)],
                         ids=lambda x: x if isinstance(x, str) else str(x.relative_to(ROOT)))
def test_a_lower_layer_imports_nothing_above_it(folder, path):
    upward = [(line, m) for line, m in _imports(path) if not _within(m, ALLOWED[folder])]
    assert not upward, f"{path.relative_to(ROOT)} imports {upward}, above {folder}/"


@pytest.mark.parametrize("path", [p for f in ALLOWED for p in _files(f)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_a_lower_layer_imports_the_package_at_the_top(path):
    local = _imports(path, local_only=True)
    assert not local, f"{path.relative_to(ROOT)} imports {local} inside functions"


@pytest.mark.parametrize("module", BOTTOM)
def test_the_bottom_layer_imports_only_itself(module):
    path = ROOT / "topiczoo" / f"{module.split('.')[1]}.py"
    above = [(line, m) for line, m in _imports(path) if not _within(m, BOTTOM)]
    assert not above, f"{module} imports {above}"


def test_the_check_sees_an_upward_import(tmp_path):
    """The scan finds an import of a driver, at the top and inside a function."""
    planted = tmp_path / "planted.py"
    planted.write_text("import numpy\nfrom topiczoo.fit import fit\n\n\ndef f():\n"
                       "    from topiczoo import predict\n    return predict\n")
    assert [m for _, m in _imports(planted)] == ["topiczoo.fit", "topiczoo.predict"]
    assert [m for _, m in _imports(planted, local_only=True)] == ["topiczoo.predict"]
    assert not _within("topiczoo.fit", ALLOWED["models"])


def test_no_function_of_the_kernels_is_a_long_room():
    long = {}
    for path in _files("kernels"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_KERNEL_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.name}"] = length
    assert not long, f"functions over {MAX_KERNEL_FUNCTION_LINES} lines: {long}"
