"""Fix safety (ruff's classes): every rule is safe or unsafe, shown in --check/--diff, --list, JSON and SARIF;
`--no-unsafe-fixes` runs only the safe rules."""

from __future__ import annotations

import json

from compat.migrate.cli import main
from migrations import all_migrations
from migrations.base import FIX_SAFETY

from ._util import OLD_SFT, commit_all, git_repo

PPO = 'from trl import PPOConfig\n\nconfig = PPOConfig(batch_size=8, mini_batch_size=8)\n'


def _cli(*args, cwd, capsys, monkeypatch):
    monkeypatch.chdir(cwd)
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_every_rule_is_classed_and_the_known_ones_as_expected():
    classes = {m.id: m.fix_safety for m in all_migrations()}
    assert set(classes.values()) <= set(FIX_SAFETY)
    for unsafe in ("ppo-to-grpo", "value-head-models", "dependency-manifests", "lm-head-fp32-upcast"):
        assert classes[unsafe] == "unsafe", unsafe
    for safe in ("deprecated-import-paths", "sft-chunked-nll-loss-type", "removed-ssd"):
        assert classes[safe] == "safe", safe


def test_check_report_and_sarif_carry_the_class(tmp_path, capsys, monkeypatch):
    repo = git_repo(tmp_path / "repo")
    (repo / "sft.py").write_text(OLD_SFT)
    (repo / "ppo.py").write_text(PPO)
    commit_all(repo)
    code, out, err = _cli("--check", ".", "--report", "r.json", cwd=repo, capsys=capsys, monkeypatch=monkeypatch)
    assert code == 1
    assert "ppo.py: fixes: unsafe [ppo-to-grpo]" in err and "sft.py: fixes: safe [sft-chunked-nll-loss-type]" in err
    report = json.loads((repo / "r.json").read_text())
    assert report["fix_safety"]["ppo-to-grpo"] == "unsafe"
    files = {f["path"]: f for f in report["files"]}
    assert files["ppo.py"]["fix_safety"] == "unsafe" and files["sft.py"]["fix_safety"] == "safe"
    assert {f["fix_safety"] for f in files["ppo.py"]["findings"]} == {"unsafe"}

    _, out, _ = _cli("--check", ".", "--report", "-", "--format", "sarif", cwd=repo, capsys=capsys,
                        monkeypatch=monkeypatch)
    sarif = json.loads(out[out.index("{"):])
    rules = {d["id"]: d for d in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["ppo-to-grpo"]["properties"]["fixSafety"] == "unsafe"
    assert all(r["properties"]["fixSafety"] in ("safe", "unsafe") for r in sarif["runs"][0]["results"])


def test_no_unsafe_fixes_runs_only_safe_rules(tmp_path, capsys, monkeypatch):
    repo = git_repo(tmp_path / "repo")
    (repo / "sft.py").write_text(OLD_SFT)
    (repo / "ppo.py").write_text(PPO)
    commit_all(repo)
    _, _, err = _cli("--no-unsafe-fixes", ".", cwd=repo, capsys=capsys, monkeypatch=monkeypatch)
    ppo = (repo / "ppo.py").read_text()
    # the unsafe rule did not run: the code is as it was; the safe trl-api-leftovers marks what 1.16 rejects
    assert [ln for ln in ppo.splitlines() if "TODO(trl-compat)" not in ln] == PPO.splitlines()
    assert "[trl-api-leftovers]" in ppo and "GRPO" not in ppo
    assert "loss_type=\"nll\"" in (repo / "sft.py").read_text()
    assert "not running unsafe" in err and "ppo-to-grpo" in err


def test_list_shows_the_class(capsys, monkeypatch, tmp_path):
    _, out, _ = _cli("--list", cwd=tmp_path, capsys=capsys, monkeypatch=monkeypatch)
    line = next(ln for ln in out.splitlines() if ln.startswith("ppo-to-grpo "))
    assert " unsafe " in line
