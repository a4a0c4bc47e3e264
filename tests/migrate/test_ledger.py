"""The ledger (issue 13): every run lists the `# TODO(trl-compat):` markers left, at their lines in the files as
they are now, and `--check` stays red while any remain."""

from __future__ import annotations

import json
import re
import shutil

from compat.migrate.cli import main

from ._util import REPO, commit_all, git_repo

_STEP = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<col>\d+): manual: ", re.M)


def cli(*args: str, cwd, capsys, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_positions_after_an_in_place_write_point_at_the_markers_as_written(tmp_path, capsys, monkeypatch):
    repo = git_repo(tmp_path / "repo")
    shutil.copy(REPO / "examples" / "ppo_era" / "classic_gpt2_sentiment.py", repo / "train.py")
    (repo / "notes.py").write_text("import os\n\n# TODO(trl-compat): [by-hand] decide the reward scale\nx = 1\n")
    commit_all(repo)
    code, _, err = cli(".", "--report", str(tmp_path / "r.json"), cwd=repo, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0, err
    steps = [(m["path"], int(m["line"]), int(m["col"])) for m in _STEP.finditer(err)]
    assert len(steps) >= 2 and ("notes.py", 3, 1) in steps
    for path, line, col in steps:  # each printed position is a marker of the written file
        text = (repo / path).read_text().splitlines()[line - 1]
        assert text[col - 1 :].startswith("# TODO(trl-compat):"), (path, line, text)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["ledger"]["left"] == len(steps)
    for f in report["files"]:
        for finding in f["findings"]:
            if finding["severity"] == "manual" and f["written"]:
                line = (repo / f["path"]).read_text().splitlines()[finding["line"] - 1]
                assert "TODO(trl-compat)" in line
    assert f"{len(steps)} manual step(s) left" in err

    commit_all(repo)
    code, out, err2 = cli("--check", ".", cwd=repo, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 1 and out == ""  # nothing to rewrite, markers left
    assert sorted((m["path"], int(m["line"])) for m in _STEP.finditer(err2)) == sorted((p, ln) for p, ln, _ in steps)
    assert f"{len(steps)} manual step(s) left" in err2 and "0 manual step(s) left" not in err2
    code, _, _ = cli("--check", ".", "--accept-markers", cwd=repo, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0


def test_check_lists_markers_in_notebooks_and_manifests(tmp_path, capsys, monkeypatch):
    repo = git_repo(tmp_path / "repo")
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": ["import os\n", "# TODO(trl-compat): [x] cell marker\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (repo / "nb.ipynb").write_text(json.dumps(nb))
    (repo / "requirements.txt").write_text("trl>=1.16.0  # TODO(trl-compat): [pins] check the pin\n")
    (repo / "s.py").write_text('s = "# TODO(trl-compat): only a string"\n')
    commit_all(repo)
    code, _, err = cli("--check", ".", "--report", str(tmp_path / "r.json"), cwd=repo, capsys=capsys,
                       monkeypatch=monkeypatch)
    assert code == 1
    assert "nb.ipynb:cell 0:2: manual: [x] cell marker" in err
    assert "requirements.txt:1:14: manual: [pins] check the pin" in err
    assert "s.py" not in err and "2 manual step(s) left" in err
    ledger = json.loads((tmp_path / "r.json").read_text())["ledger"]
    assert ledger["left"] == 2 and all(not s["new"] for s in ledger["steps"])
