"""``import topiczoo`` is light while every public name still resolves.

Each check runs in a fresh interpreter: this test process has long imported JAX."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _fresh(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=300, cwd=Path(__file__).parent)


def test_import_topiczoo_is_light_and_its_names_resolve():
    code = """
import sys
import topiczoo
heavy = {'jax', 'numpyro', 'numba', 'arviz', 'matplotlib', 'numpy'}
assert not heavy & {m.split('.')[0] for m in sys.modules}, sorted(sys.modules)
assert set(topiczoo.__all__) <= set(dir(topiczoo))
assert {'models', 'kernels', 'diagnostics', 'cli', 'corpus'} <= set(dir(topiczoo))
for name in topiczoo.__all__:
    assert getattr(topiczoo, name) is not None, name
print('ok')
"""
    done = _fresh(code)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


def test_fit_and_predict_stay_functions_whichever_module_comes_first():
    """``topiczoo.fit`` is the function, as when the package imported everything at once,
    even after ``import topiczoo.fit`` (which binds the module to the name in the package)."""
    code = """
import sys
import topiczoo.fit
import topiczoo.predict
import topiczoo
from topiczoo import fit, predict, Corpus, REGISTRY
module = sys.modules['topiczoo.fit']
assert topiczoo.fit is fit is module.fit and callable(fit), topiczoo.fit
assert topiczoo.predict is predict is sys.modules['topiczoo.predict'].predict
assert topiczoo.datasets.load_dataset is topiczoo.load_dataset
assert 'medlda' in REGISTRY and Corpus.__module__ == 'topiczoo.corpus'
from topiczoo.fit import FitResult
assert topiczoo.FitResult is FitResult
try:
    topiczoo.no_such_name
except AttributeError as err:
    assert "has no attribute 'no_such_name'" in str(err)
print('ok')
"""
    done = _fresh(code)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr
