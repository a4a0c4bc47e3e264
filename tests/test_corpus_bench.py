"""The corpus benchmark's own plumbing (benchmarks/corpus.py): the pointer file, tree extraction, the trl-import
detector, the static-check output reader, and one end-to-end run on a local tree (slow: it spawns the migrator)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("corpus_bench", REPO / "benchmarks" / "corpus.py")
corpus = importlib.util.module_from_spec(spec)
sys.modules["corpus_bench"] = corpus
spec.loader.exec_module(corpus)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
                          cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def test_corpus_file_is_pointers_only_and_well_formed():
    entries = corpus.load_corpus(corpus.CORPUS)
    repos = [e for e in entries if "repo" in e]
    assert len({e["repo"] for e in repos}) >= 30
    eras = {e["era"] for e in repos}
    assert {"classic", "ppov2", "experimental", "none"} <= eras
    for e in repos:
        assert re.fullmatch(r"[0-9a-f]{40}", e["commit"]), e["name"]
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", e["repo"]), e["name"]
        assert bool(e.get("negative")) == (e["era"] == "none"), e["name"]
        for script in e.get("entry", []):
            assert isinstance(script["path"], str) and all(isinstance(a, str) for a in script["args"])
    negatives = [e for e in repos if e.get("negative")]
    assert len(negatives) >= 3
    for e in entries:
        if "tree" in e:
            assert Path(e["tree"]).is_dir(), e["name"]


def test_materialise_writes_the_commit_and_skips_missing_blobs(tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "ppo.py").write_text("from trl import PPOTrainer\n")
    (src / "run.sh").write_text("#!/bin/sh\n")
    (src / "run.sh").chmod(0o755)
    (src / "data.json").write_text("[1, 2, 3]\n")
    _git(src, "init", "-q")
    _git(src, "add", "-A")
    _git(src, "commit", "-qm", "one")
    commit = _git(src, "rev-parse", "HEAD")
    # drop one blob from the object store, as stored snapshots do for large files
    data_sha = _git(src, "rev-parse", "HEAD:data.json")
    obj = src / ".git" / "objects" / data_sha[:2] / data_sha[2:]
    obj.unlink()

    tree = corpus.materialise(src / ".git", commit, tmp_path / "out")
    assert (tmp_path / "out" / "pkg" / "ppo.py").read_text() == "from trl import PPOTrainer\n"
    assert (tmp_path / "out" / "run.sh").stat().st_mode & 0o111
    assert tree.missing_blobs == ["data.json"] and tree.files == 2

    sub = corpus.materialise(src / ".git", commit, tmp_path / "sub", subdir="pkg")
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["ppo.py"] and sub.files == 1
    with pytest.raises(corpus.CorpusError, match="not found"):
        corpus.materialise(src / ".git", "0" * 40, tmp_path / "bad")


@pytest.mark.parametrize("line, imports", [
    ("from trl import PPOTrainer", True),
    ("    from trl.core import LengthSampler", True),
    ("import trl", True),
    ("import trl.experimental.ppo as ppo", True),
    ("from trlx import train", False),
    ("import trlx", False),
    ("# from trl import PPOTrainer", False),
    ("text = 'we use trl for PPO'", False),
])
def test_trl_import_detector(line, imports):
    assert bool(corpus.TRL_IMPORT.search(line + "\n")) is imports


def test_parse_check_reads_the_check_report_schema():
    out = json.dumps({"schema": "trl-compat/check-report/1", "files": [
        {"path": "./a.py", "problems": [], "markers": [], "errors": []},
        {"path": "b/c.py", "problems": [{"line": 3, "message": "no keyword 'beta'", "cell": None}],
         "markers": [{"line": 2, "cell": None}], "errors": []},
        {"path": "d.py", "problems": [], "markers": [], "errors": ["cannot parse"]}]})
    problems, markers = corpus.parse_check(out)
    assert problems["a.py"] == [] and markers["b/c.py"] == [{"line": 2, "cell": None}]
    assert corpus.problem_text(problems["b/c.py"][0]) == "3: no keyword 'beta'"
    assert problems["d.py"] == [{"line": None, "message": "error: cannot parse"}]  # an unreadable file fails
    with pytest.raises(ValueError):
        corpus.parse_check(json.dumps({"nothing": 1}))


def test_is_marked_looks_at_the_whole_statement_and_the_comment_block_above(tmp_path):
    (tmp_path / "t.py").write_text(
        "import x\n"                                  # 1
        "# TODO(trl-compat): beta moved\n"            # 2
        "# more words\n"                              # 3
        "trainer = DPOTrainer(\n"                     # 4
        "    model,\n"                                # 5
        "    beta=0.1,\n"                             # 6
        ")\n"                                         # 7
        "other = DPOTrainer(beta=0.2)\n")             # 8
    marks = [{"line": 2, "cell": None}]
    assert corpus.is_marked(tmp_path, "t.py", {"line": 6, "cell": None}, marks)
    assert not corpus.is_marked(tmp_path, "t.py", {"line": 8, "cell": None}, marks)
    assert not corpus.is_marked(tmp_path, "t.py", {"line": None, "cell": None}, marks)


def test_is_marked_reads_a_py_exported_from_a_notebook(tmp_path):
    """`!pip install` lines (a Colab export): the statement is still found, so its marker above it counts."""
    (tmp_path / "t.py").write_text(
        "!pip install trl\n"                          # 1
        "# TODO(trl-compat): warmup_ratio= removed\n"  # 2
        "args = SFTConfig(\n"                         # 3
        "    warmup_ratio=0.1,\n"                     # 4
        ")\n")
    assert corpus.is_marked(tmp_path, "t.py", {"line": 4, "cell": None}, [{"line": 2, "cell": None}])

@pytest.mark.slow
def test_end_to_end_on_a_local_tree(tmp_path, capsys):
    tree = tmp_path / "proj"
    tree.mkdir()
    (tree / "train.py").write_text(
        "from trl import PPOConfig, PPOTrainer\n\nconfig = PPOConfig(batch_size=8)\n")
    (tree / "other.py").write_text("import trlx\n")
    out = tmp_path / "r.json"
    rc = corpus.main(["--tree", str(tree), "--json", str(out)])
    data = json.loads(out.read_text())
    (entry,) = data["entries"]
    assert rc == 0 and entry["trl_files"] == 1
    assert entry["changed_files"] == ["train.py"]
    assert entry["markers_in_files"] == entry["markers_in_report"]
    assert (tree / "train.py").read_text().startswith("from trl import PPOConfig")  # the original is never written
    assert "proj" in capsys.readouterr().out  # the table names the entry


def test_files_importing_the_repositorys_own_trl_are_not_trl_files(tmp_path):
    """szalouk/rlhf-bias keeps TRL 0.4 in `trl/` beside its scripts: their `from trl import ...` is that copy, which
    the migrator leaves alone and no TRL upgrade touches; they are listed apart, not counted as files importing TRL."""
    tree = tmp_path / "proj"
    (tree / "trl").mkdir(parents=True)
    (tree / "trl" / "__init__.py").write_text("from .core import set_seed\n")
    (tree / "rl_training.py").write_text("from trl import PPOConfig, set_seed\n")
    (tree / "scripts").mkdir()
    (tree / "scripts" / "sft.py").write_text("from trl import SFTTrainer\n\nSFTTrainer(model=m, tokenizer=t)\n")
    out = tmp_path / "r.json"
    assert corpus.main(["--tree", str(tree), "--json", str(out)]) == 0
    (entry,) = json.loads(out.read_text())["entries"]
    assert entry["own_trl_files"] == ["rl_training.py"] and entry["trl_file_list"] == ["scripts/sft.py"]
    assert entry["trl_files"] == 1 and entry["check"]["1.16.0"]["pass_after"] == 1


def test_is_marked_numbers_notebook_cells_as_the_check_does(tmp_path):
    # `cell` counts every cell (markdown too), as `compat.check` and the migrator report it
    nb = {"cells": [{"cell_type": "markdown", "source": ["# title\n"]},
                    {"cell_type": "code", "source": ["import os\n"]},
                    {"cell_type": "code", "source": ["# TODO(trl-compat): gone\n", "# more\n", "from trl.x import y\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "n.ipynb").write_text(json.dumps(nb))
    assert corpus.is_marked(tmp_path, "n.ipynb", {"line": 3, "cell": 2}, [{"line": 1, "cell": 2}])
    assert not corpus.is_marked(tmp_path, "n.ipynb", {"line": 1, "cell": 1}, [{"line": 1, "cell": 2}])


def test_a_parse_error_of_the_source_as_written_is_told_apart():
    err = {"line": None, "message": "error: cell 5: does not parse: invalid syntax (line 3)"}
    assert corpus._source_error(err, [dict(err)])  # there before migration: the file as written
    assert not corpus._source_error(err, [])  # the migration broke it: that is no excuse
    other = {"line": 3, "message": "TRL 1.16.0 has no `trl.core`"}
    assert not corpus._source_error(other, [other])
    # markers added above the line that does not parse (code for a newer Python than the check's) move its number
    moved = {"line": None, "message": "error: does not parse: unterminated string literal (line 451)"}
    assert corpus._source_error(moved, [{"line": None, "message": "error: does not parse: unterminated string "
                                                                  "literal (line 449)"}])
