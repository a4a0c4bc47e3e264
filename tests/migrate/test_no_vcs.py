"""The no-VCS guard (cargo fix's rule): writing into a folder that no git or Mercurial work tree holds is refused
unless `--allow-no-vcs`; `--diff` and `--check` never write and never need it. In-process `main` (the same code path
as the console script). Mercurial is not installed here: its work tree is simulated by its metadata folder (`.hg`)
only, which is all the guard reads."""

from __future__ import annotations

from compat.migrate.cli import main
from compat.migrate.gitguard import vcs_root

from ._util import NEW_SFT, OLD_SFT, commit_all, git_repo


def _plain(tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "train.py").write_text(OLD_SFT)
    return folder


def test_a_plain_folder_is_refused_and_nothing_is_written(tmp_path, capsys) -> None:
    folder = _plain(tmp_path)
    assert main([str(folder)]) == 2
    err = capsys.readouterr().err
    assert "not inside a git or Mercurial work tree" in err and str(folder) in err
    assert "nothing was written" in err and "--allow-no-vcs" in err and "git init" in err
    assert (folder / "train.py").read_text() == OLD_SFT
    assert main([str(folder / "train.py")]) == 2  # a file in it: the same
    assert (folder / "train.py").read_text() == OLD_SFT


def test_check_and_diff_need_no_flag(tmp_path, capsys) -> None:
    folder = _plain(tmp_path)
    assert main(["--check", str(folder)]) == 1
    assert main(["--diff", str(folder)]) == 1
    out = capsys.readouterr()
    assert "not inside a git" not in out.err and "loss_type=\"nll\"" in out.out
    assert (folder / "train.py").read_text() == OLD_SFT


def test_allow_no_vcs_writes(tmp_path, capsys) -> None:
    folder = _plain(tmp_path)
    assert main(["--allow-no-vcs", "-q", str(folder)]) == 0
    assert (folder / "train.py").read_text() == NEW_SFT


def test_a_git_work_tree_needs_no_flag(tmp_path, capsys) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / "sub").mkdir()
    (repo / "sub" / "train.py").write_text(OLD_SFT)
    commit_all(repo)
    assert vcs_root(str(repo / "sub")) == str(repo.resolve())
    assert main(["-q", str(repo / "sub")]) == 0
    assert (repo / "sub" / "train.py").read_text() == NEW_SFT


def test_a_mercurial_work_tree_needs_no_flag(tmp_path, capsys) -> None:
    root = tmp_path / "hgrepo"
    (root / ".hg").mkdir(parents=True)  # Mercurial's metadata folder (hg itself is not installed here)
    (root / "train.py").write_text(OLD_SFT)
    assert vcs_root(str(root / "train.py")) == str(root.resolve())
    assert main(["-q", str(root)]) == 0
    assert (root / "train.py").read_text() == NEW_SFT


def test_vcs_root_of_a_plain_folder_is_none(tmp_path) -> None:
    assert vcs_root(str(_plain(tmp_path))) is None
