"""Run folders of ``topiczoo fit``: each run without --out gets a folder of its own, and
``runs/latest`` names the newest (a symbolic link replaced in one step, or a text file where
there are no symbolic links) for the commands that read a run.

The sampler is replaced by a stand-in that returns at once (these tests are about folders);
the data set is a tiny one."""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

import topiczoo.datasets
import topiczoo.run
from chains import small_corpus
from topiczoo import Corpus, rundir
from topiczoo.cli import main
from topiczoo.datasets import DataSet
from topiczoo.run import Run

NOON = time.mktime((2026, 11, 24, 12, 0, 0, 0, 0, -1))  # local time
QUICK = ["--topics", "2", "--chains", "1", "--iterations", "2", "--snapshots", "1", "--quiet"]


def _tiny(name, data_dir=None, seed=0, **kwargs):
    corpus = small_corpus()
    corpus = Corpus(corpus.words, corpus.doc_offsets, corpus.vocabulary,
                    labels=np.arange(corpus.num_docs) % 2)
    return DataSet(name, corpus, corpus, "binary", ("a", "b"), 0, "tiny")


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """Runs in ``tmp_path`` (the working directory) on a tiny data set with a stand-in
    sampler, at a clock the test sets (``folders.now``); ``folders.fits`` records the
    checkpoint path of each fit."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(topiczoo.datasets, "load_dataset", _tiny)

    class State:
        now = NOON
        fits = []
        interrupt = False

    def fit_and_predict(entry, num_topics, train, test, *, checkpoint=None, **kwargs):
        State.fits.append(checkpoint)
        if State.interrupt:
            Path(checkpoint).write_bytes(b"finished chunks")
            raise KeyboardInterrupt
        return Run(None, None, 0.0, 0.0, 0.0)

    monkeypatch.setattr(topiczoo.run, "fit_and_predict", fit_and_predict)
    monkeypatch.setattr(rundir, "_clock", lambda: State.now)
    return State


def _summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text())


def test_a_run_without_out_gets_a_folder_of_its_own_and_latest_names_it(folders, capsys):
    """The default run went to runs/latest, and the next (a one-chain test) replaced it."""
    assert main(["fit", "--model", "medlda", "--chains", "4", *QUICK[4:]]) == 0
    first = Path("runs/medlda-20261124-120000")
    assert _summary(first)["chains"] == 4
    assert os.readlink("runs/latest") == first.name  # relative: the runs folder can move
    assert f"wrote {first}/summary.json" in capsys.readouterr().out
    assert main(["fit", "--model", "medlda", *QUICK]) == 0  # the same second
    second = Path("runs/medlda-20261124-120000-2")
    folders.now += 3600
    assert main(["fit", "--model", "gslda", *QUICK]) == 0
    third = Path("runs/gslda-20261124-130000")
    assert _summary(first)["chains"] == 4 and _summary(second)["chains"] == 1
    assert _summary(third)["model"] == "gslda"
    assert os.readlink("runs/latest") == third.name
    assert sorted(os.listdir("runs")) == sorted([first.name, second.name, third.name, "latest"])


def test_latest_is_replaced_in_one_step(folders, monkeypatch):
    """A reader of runs/latest finds the old run or the new one, never nothing: the new link
    is renamed over the old one, which is never removed first."""
    assert main(["fit", *QUICK]) == 0
    real_replace, seen = os.replace, []

    def replace(source, target):
        seen.append((Path(source).name, Path(target).name, os.readlink(target)))
        return real_replace(source, target)

    monkeypatch.setattr(rundir.os, "replace", replace)
    folders.now += 1
    assert main(["fit", *QUICK]) == 0
    assert seen == [(f".latest.{os.getpid()}.tmp", "latest", "medlda-20261124-120000")]
    assert os.readlink("runs/latest") == "medlda-20261124-120001"


def test_without_symbolic_links_latest_is_a_text_file_the_commands_follow(folders,
                                                                          monkeypatch, capsys):
    def no_links(*args, **kwargs):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(rundir.os, "symlink", no_links)
    assert main(["fit", *QUICK]) == 0
    latest = Path("runs/latest")
    assert latest.is_file() and latest.read_text() == "medlda-20261124-120000\n"
    read = []
    monkeypatch.setattr("topiczoo.diagnostics.diagnose", lambda path: read.append(path) or "")
    assert main(["diagnose", "runs/latest"]) == 0
    assert read == [Path("runs/medlda-20261124-120000")]
    capsys.readouterr()
    # --out runs/latest is the folder it names: it holds files, and --checkpoint resumes there
    assert main(["fit", "--out", "runs/latest", *QUICK]) == 2
    assert "--out runs/medlda-20261124-120000 already holds files" in capsys.readouterr().err
    folders.now += 1
    assert main(["fit", *QUICK]) == 0  # the text file is replaced as the link is
    assert latest.read_text() == "medlda-20261124-120001\n"


def test_diagnose_follows_the_latest_link(folders, monkeypatch):
    assert main(["fit", *QUICK]) == 0
    read = []
    monkeypatch.setattr("topiczoo.diagnostics.diagnose", lambda path: read.append(path) or "")
    assert main(["diagnose", "runs/latest"]) == 0
    assert read == [Path("runs/medlda-20261124-120000")]


def test_a_latest_folder_of_an_earlier_version_is_left_alone(folders, capsys):
    old = Path("runs/latest")
    old.mkdir(parents=True)
    (old / "summary.json").write_text('{"chains": 4}')
    assert main(["fit", *QUICK]) == 0
    assert "warning: runs/latest is a run folder (written by an earlier version), not a link; " \
           "it is left as it is" in capsys.readouterr().err
    assert _summary(old) == {"chains": 4} and not old.is_symlink()
    assert _summary(Path("runs/medlda-20261124-120000"))["chains"] == 1


def test_check_names_the_new_folder_and_makes_none(folders, capsys):
    assert main(["fit", *QUICK, "--check"]) == 0
    assert "into a new folder runs/medlda-20261124-120000" in capsys.readouterr().out
    assert not Path("runs").exists()


def test_an_interrupted_run_in_a_new_folder_says_which_out_resumes_it(folders, capsys):
    """'resume with the same command' made a new folder; the message names the --out."""
    folders.interrupt = True
    assert main(["fit", "--checkpoint", *QUICK]) == 130
    assert capsys.readouterr().err == (
        "interrupted; resume with the same command and --out runs/medlda-20261124-120000 "
        "(finished work there)\n")
    folders.interrupt = False
    folders.now += 60
    assert main(["fit", "--checkpoint", "--out", "runs/medlda-20261124-120000", *QUICK]) == 0
    assert folders.fits[-1] == Path("runs/medlda-20261124-120000/checkpoint.npz")
    assert os.readlink("runs/latest") == "medlda-20261124-120000"  # --out moves no link


def test_runs_of_one_second_are_numbered_and_other_paths_stay(tmp_path):
    made = [rundir.make_new("lda", tmp_path, now=NOON) for _ in range(3)]
    assert [p.name for p in made] == ["lda-20261124-120000", "lda-20261124-120000-2",
                                      "lda-20261124-120000-3"]
    assert rundir.resolve(tmp_path / "elsewhere") == tmp_path / "elsewhere"
    note = tmp_path / "note.txt"  # a one-line file naming no folder is not a pointer
    note.write_text("nothing here\n")
    assert rundir.resolve(note) == note


@pytest.mark.slow  # a real fit
def test_diagnose_runs_latest_after_a_real_fit(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(topiczoo.datasets, "load_dataset", _tiny)
    assert main(["fit", "--model", "lda", "--chains", "2", "--iterations", "8", "--topics", "2",
                 "--snapshots", "2", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["diagnose", "runs/latest"]) == 0
    target = Path("runs") / os.readlink("runs/latest")
    assert (target / "report.md").read_text().startswith(f"# Diagnostics of `{target.name}`")
