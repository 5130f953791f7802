"""The command line answers --help and argument errors before the heavy modules are imported
(a typo cost seconds of JAX imports before its error), and ``import topiczoo`` is light while
every public name still resolves.

Each check runs in a fresh interpreter: this test process has long imported JAX."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

#: Modules none of which --help or an argument error may import.
HEAVY = ("jax", "jaxlib", "numpyro", "numba", "arviz", "matplotlib")


def _fresh(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=300, cwd=Path(__file__).parent)


def test_help_and_argument_errors_come_before_jax(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    used = tmp_path / "used"
    used.mkdir()
    (used / "summary.json").write_text("{}")
    cases = [  # (argv, exit code, words of the message)
        (["--help"], 0, "usage: topiczoo"),
        (["fit", "--help"], 0, "--response RESPONSE"),
        (["diagnose", "--help"], 0, "runs/latest"),
        (["compare", "--help"], 0, "--models"),
        (["fit", "--modle", "x"], 2, "did you mean --model?"),
        (["fit", "--model", "medlad"], 2, "unknown model 'medlad' (did you mean medlda?)"),
        (["fit", "--data", "bbcc"], 2, "unknown data set 'bbcc' (did you mean bbc?)"),
        (["fit", "--topics", "abc"], 2, "invalid int value: 'abc'"),
        (["fit", "--alpha", "nan"], 2, "expected a finite number, got 'nan'"),
        (["fit", "--c", "x"], 2, "expected a number or 'cv', got 'x'"),
        (["fit", "--topics", "0"], 2, "--topics must be >= 1, got 0"),
        (["fit", "--model", "gslda", "--ell", "3"], 2, "--model gslda has no option --ell"),
        (["fit", "--sampler", "ligth"], 2, "unknown sampler 'ligth' for medlda"),
        (["fit", "--c-grid", "1,2"], 2, "--c-grid is the grid of --c cv"),
        (["fit", "--max-iterations", "9"], 2, "give --until-rhat too"),
        (["fit", "--snapshots", "0"], 2, "medlda needs --snapshots >= 1"),
        (["fit", "--out", str(a_file)], 2, "is a file, not a directory"),
        (["fit", "--out", str(used)], 2, "already holds files (summary.json)"),
        (["fit", "--out", str(used), "--checkpoint"], 2, "but no checkpoint to resume"),
        (["compare", "--topics", "x"], 2, "expected comma-separated integers"),
    ]
    report = tmp_path / "report.json"
    code = f"""
import contextlib, io, json, sys
from topiczoo.cli import main
out = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stdout(err), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit_:
            status = exit_.code
    loaded = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))
    out.append([status, err.getvalue(), loaded])
open(sys.argv[2], "w").write(json.dumps(out))
"""
    done = _fresh(code, json.dumps([argv for argv, _, _ in cases]), str(report))
    assert done.returncode == 0, done.stderr
    for (argv, status, words), (got, text, loaded) in zip(cases, json.loads(report.read_text())):
        assert (got, loaded) == (status, []), (argv, text)
        assert words in " ".join(text.split()), (argv, text)


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
