"""A fresh clone with no ../shared: every data set through the replaced download, and
tutorials at small size.

    python tests/fresh_clone.py [--notebook 04]

Clones this repository's committed HEAD into a temporary folder (nothing beside it: no
``../shared``), installs the clone (no dependencies: they come from the running environment)
into a new virtual environment there, and in a working folder with no ``../shared`` either,
with ``TOPICZOO_DATA`` unset and the user cache in the temporary folder:

1. loads every name of ``DATASETS`` with ``load_dataset``; the download is replaced, as in
   ``tests/test_fetch.py``, by a server of small sample archives in the real forms (the
   checksum tables by the samples'): the URLs asked for and the cache are printed;
2. runs ``tutorials/01_first_fit.py`` at small size and prints ``git status`` of the clone
   (empty: its pictures went to a temporary folder);
3. with ``--notebook NN``, runs that notebook at small size (``notebooks.py --check``) with
   ``TOPICZOO_DATA`` set to the cache the samples were fetched into.

It prints what it does and exits non-zero if a step fails. Several minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

LOAD_EVERY_NAME = r"""
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])  # the clone's tests/: the sample archives of test_fetch.py
import pytest
import test_fetch as t
from topiczoo import datasets, fetch
from topiczoo.datasets import DATASETS, load_dataset

print("../shared/data looked for at:", [str(c) for c in datasets._shared_candidates()], "exist:",
      [c.exists() for c in datasets._shared_candidates()])
samples = t.build_samples(Path(sys.argv[1]))
server, cache = t.serve_samples(samples, Path(sys.argv[2]), pytest.MonkeyPatch())
for name in DATASETS:
    before = len(server.calls)
    ds = load_dataset(name)
    got = [u for u in server.calls[before:]]
    print(f"{name}: {ds.summary()}")
    print(f"    source {ds.source}; downloaded: {got or 'nothing'}")
print("cache:", cache)
for p in sorted(cache.rglob("*")):
    if p.is_file():
        print("   ", p.relative_to(cache))
"""


def run(cmd, **kw):
    print("$", " ".join("<script>" if "\n" in str(c) else str(c) for c in cmd), flush=True)
    done = subprocess.run([str(c) for c in cmd], text=True, **kw)
    if done.returncode:
        sys.exit(f"failed ({done.returncode}): {cmd}")
    return done


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebook", default=None, help="also run this notebook (e.g. 04) at small size")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="topiczoo-fresh-"))
    clone, venv, work = tmp / "clone", tmp / "venv", tmp / "work" / "here"
    work.mkdir(parents=True)
    run(["git", "clone", "-q", REPO, clone])
    print("clone at", run(["git", "-C", clone, "log", "--oneline", "-1"], capture_output=True).stdout.strip())
    print("../shared beside the clone:", (clone.parent / "shared").exists(),
          "| beside the working folder:", (work.parent / "shared").exists())
    run([sys.executable, "-m", "venv", venv])
    py = venv / "bin" / "python"
    site = run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
               capture_output=True).stdout.strip()
    # the dependencies from the running environment, the package from the clone
    Path(site, "deps_from_parent.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run([py, "-m", "pip", "install", "-q", "--no-deps", clone])
    env = {k: v for k, v in os.environ.items() if k not in ("TOPICZOO_DATA", "TOPICZOO_FIGURES", "PYTHONPATH")}
    env.update(XDG_CACHE_HOME=str(tmp / "xdg"), TMPDIR=str(tmp), MPLBACKEND="Agg")
    where = run([py, "-c", "import topiczoo; print(topiczoo.__file__)"], cwd=work, env=env,
                capture_output=True).stdout.strip()
    print("topiczoo imported from", where)
    print("\n== 1. load_dataset on every name, the download replaced")
    run([py, "-c", LOAD_EVERY_NAME, tmp / "samples", tmp / "case", clone / "tests"], cwd=work, env=env)
    print("\n== 2. tutorial 1 at small size")
    out = run([py, clone / "tutorials" / "01_first_fit.py"], cwd=work,
              env=dict(env, TOPICZOO_TUTORIAL_SIZE="small"), capture_output=True)
    print("\n".join(out.stdout.splitlines()[-3:]))
    status = run(["git", "-C", clone, "status", "--porcelain", "--untracked-files=all"], capture_output=True).stdout
    print("git status of the clone:", repr(status))
    if status:
        sys.exit("the tutorial changed the clone")
    if args.notebook:
        print(f"\n== 3. notebook {args.notebook} at small size, reading the fetched cache")
        cache = tmp / "case" / "xdg" / "topiczoo" / "data"
        run([py, clone / "tutorials" / "notebooks.py", "--check", args.notebook], cwd=clone / "tutorials",
            env=dict(env, TOPICZOO_TUTORIAL_SIZE="small", TOPICZOO_DATA=str(cache)))
    print("\nall steps passed;", tmp, "can be removed")


if __name__ == "__main__":
    main()
