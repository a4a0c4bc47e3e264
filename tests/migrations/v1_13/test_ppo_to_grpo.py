"""`ppo-to-grpo` (with `value-head-models` and `ppo-helpers`, the rules a PPO script needs together).

Every `ppo_cases/NAME.before.py` is migrated (with `--to` from `NAME.options`, default grpo) and must give
`ppo_cases/NAME.after.py` exactly; `neg_*` cases have no after file and must come back byte-identical. Every case is
also migrated a second time (the engine's `verify_idempotent`: the output, migrated again, must not change), and
every after file must compile.
Set TRL_COMPAT_UPDATE_CASES=1 to (re)write the after files from the current rules, then review the diff.

Every TODO anchor the PPO rules can emit has a target in MIGRATION.md.

Two sources of anchors: every anchor string literal in the rule modules (so a branch no case reaches is still checked,
here), and the findings and markers of every case (what the rules really emitted, checked in `test_case`
with `emitted_anchors_missing`, so each case is migrated once). A target is `<a id="X">` or a heading whose
GitHub slug is X.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from migrations import get
from tests.migrations.v1_13._ppo_harness import CASES, PPO_RULE_IDS, case_names, case_option, expected_path, migrate

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "MIGRATION.md"
# the PPO rules' sources: ppo_to_grpo (its package), value_head_models, ppo_helpers
RULE_FILES = sorted(p for p in (ROOT / "migrations" / "v1_13").rglob("*.py") if "ppo" in p.name or "ppo" in p.parent.name
                    or p.name == "value_head_models.py")
MARKER = re.compile(r"# TODO\(trl-compat\): .*\(see MIGRATION\.md#([a-z0-9-]+)\)$", re.M)


def _slug(heading: str) -> str:
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def guide_anchors() -> set[str]:
    text = GUIDE.read_text()
    ids = set(re.findall(r'<a id="([^"]+)"', text))
    ids |= {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}
    return ids


def _source_anchors() -> set[str]:
    found = set()
    for path in RULE_FILES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if re.fullmatch(r"(ppo-|value-head)[a-z0-9-]*", node.value):
                    found.add(node.value)
    return found


def test_rule_anchors_exist() -> None:
    anchors = guide_anchors()
    for rule_id in PPO_RULE_IDS:
        assert get(rule_id).anchor in anchors, rule_id


def test_every_anchor_literal_in_the_rules_exists() -> None:
    assert len(RULE_FILES) >= 3, RULE_FILES
    missing = _source_anchors() - guide_anchors() - set(PPO_RULE_IDS)
    assert not missing, f"anchors without a MIGRATION.md target: {sorted(missing)}"


def emitted_anchors_missing(findings, text: str) -> set[str]:  # type: ignore[no-untyped-def]
    """Anchors a migration emitted (findings and markers in the text) that MIGRATION.md lacks."""
    emitted = {f.anchor for f in findings if f.anchor}
    emitted |= set(MARKER.findall(text))
    return emitted - guide_anchors()



UPDATE = os.environ.get("TRL_COMPAT_UPDATE_CASES") == "1"


@pytest.mark.parametrize("name", case_names())
def test_case(name: str) -> None:
    before = (CASES / f"{name}.before.py").read_text()
    result = migrate(before, case_option(name))
    assert result.ok, result.errors
    assert not emitted_anchors_missing(result.findings, result.text)
    if name.startswith("neg_"):
        assert not expected_path(name).exists(), "negative controls have no after file"
        assert result.text == before
        assert not result.findings
        return
    if UPDATE:
        expected_path(name).write_text(result.text)
    expected = expected_path(name).read_text()
    assert result.text == expected
    assert result.text != before, "a positive case must change something"


@pytest.mark.parametrize("name", case_names())
def test_after_file_compiles(name: str) -> None:
    path = expected_path(name) if expected_path(name).exists() else CASES / f"{name}.before.py"
    compile(path.read_text(), str(path), "exec")


def test_enough_cases() -> None:
    """Every era and the negative controls are covered (at least 40 cases in all)."""
    names = case_names()
    assert len(names) >= 40

    def count(*prefixes: str) -> int:
        return sum(n.startswith(prefixes) for n in names)

    assert count("classic_") >= 10  # era 1: the step loop
    assert count("trainer_", "ppov2_") >= 10  # era 2: Trainer-style PPOv2 / PPO
    assert count("experimental_") >= 5  # era 3: trl.experimental.ppo
    assert count("neg_") >= 5  # must come back byte-identical


def test_a_dropped_generate_completions_leaves_no_stray_pass() -> None:
    """`trainer.generate_completions()` has no successor: the call goes, its marker stays where it was; a `pass` is
    left only where the block would otherwise be empty (never at module level)."""
    import ast as _ast

    src = (
        "from trl import PPOConfig, PPOTrainer\n\n"
        "config = PPOConfig(batch_size=4)\n"
        "trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=ds)\n"
        "# look at samples\n"
        "trainer.generate_completions()\n"
        "trainer.train()\n\n\n"
        "def only():\n"
        "    trainer.generate_completions()\n\n\n"
        "def among():\n"
        "    x = 1\n"
        "    trainer.generate_completions()\n"
        "    return x\n\n\n"
        "trainer.generate_completions()\n"
    )
    result = migrate(src)
    assert result.ok, result.errors
    tree = _ast.parse(result.text)
    assert not [n for n in tree.body if isinstance(n, _ast.Pass)]  # no module-level `pass`
    assert "generate_completions" not in "\n".join(
        ln for ln in result.text.splitlines() if not ln.lstrip().startswith("#"))
    funcs = {n.name: n for n in tree.body if isinstance(n, _ast.FunctionDef)}
    assert [type(s).__name__ for s in funcs["only"].body] == ["Pass"]
    assert [type(s).__name__ for s in funcs["among"].body] == ["Assign", "Return"]
    lines = result.text.splitlines()
    mark = "# TODO(trl-compat): trainer.generate_completions() does not exist"
    assert sum(ln.lstrip().startswith(mark) for ln in lines) == 4
    # the user's comment and the marker stay where the call was, right above the next statement
    at = lines.index("# look at samples")
    assert lines[at + 1].startswith(mark) and lines[at + 2] == "trainer.train()"
    assert lines[-1].startswith(mark)  # the last statement of the module: the marker ends the file
    among = lines.index("    x = 1")
    assert lines[among + 1].startswith(f"    {mark}") and lines[among + 2] == "    return x"
    messages = [f.message for f in result.findings if "generate_completions" in f.message]
    assert len(messages) == 4 and all("log_completions=True" in m for m in messages)


def migrate_paths(paths, **kw):
    from compat.migrate.runner import migrate_paths as run_paths

    return run_paths(paths, jobs=1, **kw)


def _migrate_at(path: Path, text: str):
    from compat.migrate.engine import migrate_source

    result = migrate_source(text, rules=[get("ppo-to-grpo")], path=str(path), verify_idempotent=True)
    assert result.ok, result.errors
    return result


def test_a_config_subclass_imported_from_the_project_is_a_config(tmp_path: Path) -> None:
    """babylm-interactive-learning: `class CustomPPOConfig(PPOConfig)` in src/, built in ppo.py with PPO fields. Its
    base becomes GRPOConfig there, so the call here is mapped field by field like a local subclass's."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "cfg.py").write_text(
        "from trl import PPOConfig\n\n\nclass CustomPPOConfig(PPOConfig):\n"
        "    def __init__(self, *args, token_limit=None, **kwargs):\n"
        "        super().__init__(*args, **kwargs)\n        self.token_limit = token_limit\n", encoding="utf-8")
    (tmp_path / "src" / "plain.py").write_text("class PlainConfig:\n    pass\n", encoding="utf-8")
    src = ("from trl.core import LengthSampler\nfrom src.cfg import CustomPPOConfig\n\n"
           "config = CustomPPOConfig(model_name=\"gpt2\", batch_size=8, mini_batch_size=2, token_limit=10)\n")
    (tmp_path / "ppo.py").write_text(src, encoding="utf-8")
    before = {p: p.read_text(encoding="utf-8") for p in tmp_path.rglob("*.py")}
    for order in (["src/cfg.py", "ppo.py"], ["ppo.py", "src/cfg.py"]):  # either file may be done first
        for p, text in before.items():
            p.write_text(text, encoding="utf-8")
        for name in order:
            migrate_paths([str(tmp_path / name)], rules=[get("ppo-to-grpo")], allow_dirty=True)
        out = (tmp_path / "ppo.py").read_text(encoding="utf-8")
        call = ast.parse(out).body[-1].value
        assert isinstance(call, ast.Call) and call.func.id == "CustomPPOConfig"
        keys = {k.arg for k in call.keywords}
        assert {"token_limit", "per_device_train_batch_size", "num_generations"} <= keys, order
        assert not keys & {"model_name", "batch_size", "mini_batch_size"}
        assert "class CustomPPOConfig(GRPOConfig)" in (tmp_path / "src" / "cfg.py").read_text(encoding="utf-8")
        again = migrate_paths([str(tmp_path)], rules=[get("ppo-to-grpo")], allow_dirty=True, mode="check")
        assert not [f for f in again.files if f.status == "changed"]  # a second run changes nothing
    # a project class that is no PPOConfig subclass, or no file to look in: nothing changes
    plain = "from trl.core import LengthSampler\nfrom src.plain import PlainConfig\n\nc = PlainConfig(batch_size=8)\n"
    assert _migrate_at(tmp_path / "other.py", plain).text == plain
    from compat.migrate.engine import migrate_source

    assert migrate_source(src, rules=[get("ppo-to-grpo")]).text == src


def test_a_config_that_feeds_the_projects_own_trainer_is_kept(tmp_path: Path) -> None:
    """mnoukhov/async_rlhf: `src/ppov2_trainer.py` is a copy of TRL 0.9's PPOv2Trainer on `transformers.Trainer`
    taking a `PPOv2Config`; `ppov2.py` parses that config and hands it to the copy. GRPOConfig has none of the
    fields the copy reads (`total_episodes`, `num_mini_batches`, ...): both files were rewritten to GRPOConfig with no
    marker. The config now moves to the compat.trl copy (the fields of 0.9 - 0.12), unmarked; `PPOConfig` (two
    different classes across TRL releases) stays, marked at its import; a script on TRL's own PPOTrainer is still
    migrated."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "__init__.py").write_text("", encoding="utf-8")
    trainer = ("from transformers import Trainer\nfrom trl.trainer.ppov2_config import PPOv2Config\n\n\n"
               "class PPOv2Trainer(Trainer):\n    def __init__(self, config: PPOv2Config, policy) -> None:\n"
               "        self.args = config\n        self.episodes = config.total_episodes\n")
    script = ("from transformers import HfArgumentParser\nfrom trl import ModelConfig\n"
              "from trl.trainer.ppov2_config import PPOv2Config\n\nfrom src.ppov2_trainer import PPOv2Trainer\n\n"
              "config, model_config = HfArgumentParser((PPOv2Config, ModelConfig)).parse_args_into_dataclasses()\n"
              "config.total_episodes = 2048\ntrainer = PPOv2Trainer(config=config, policy=None)\n")
    (tmp_path / "src" / "ppov2_trainer.py").write_text(trainer, encoding="utf-8")
    (tmp_path / "ppov2.py").write_text(script, encoding="utf-8")
    report = migrate_paths([str(tmp_path)], rules=[get("ppo-to-grpo")], allow_dirty=True)
    for path, source in ((tmp_path / "src" / "ppov2_trainer.py", trainer), (tmp_path / "ppov2.py", script)):
        out = path.read_text(encoding="utf-8")
        assert out == source.replace("from trl.trainer.ppov2_config import PPOv2Config\n",
                                     "from compat.trl import PPOv2Config\n")
    assert not [f for e in report.files for f in e.findings if f.severity == "manual"]
    again = migrate_paths([str(tmp_path)], rules=[get("ppo-to-grpo")], allow_dirty=True, mode="check")
    assert not [f for f in again.files if f.status == "changed"]  # a second run changes nothing
    # PPOConfig feeding the project's copy of a Trainer-based trainer: TRL 0.12 - 1.12's Trainer-style config (the
    # step-loop config until 0.11 has none of the TrainingArguments fields such a trainer reads): the compat copy
    trainer_style = trainer.replace("from trl.trainer.ppov2_config import PPOv2Config", "from trl import PPOConfig") \
        .replace("config: PPOv2Config", "config: PPOConfig")
    out = _migrate_at(tmp_path / "src" / "ppo_trainer.py", trainer_style)
    assert out.text == trainer_style.replace("from trl import PPOConfig", "from compat.trl import PPOConfig")
    assert not [f for f in out.findings if f.severity == "manual"]
    # ... but a copy of the step-loop trainer (on TRL's BaseTrainer), or a step-loop field set on the config, keeps
    # the import as written, marked: which PPOConfig it is, the code does not say
    classic = trainer_style.replace("from transformers import Trainer\n", "from trl.trainer import BaseTrainer\n") \
        .replace("(Trainer)", "(BaseTrainer)")
    step_loop_field = trainer_style + "\n\nconfig = PPOConfig(model_name=\"gpt2\", ppo_epochs=4)\n"
    for name, source in (("classic_trainer.py", classic), ("step_loop_field.py", step_loop_field)):
        out = _migrate_at(tmp_path / "src" / name, source)
        lines = out.text.splitlines(keepends=True)
        marks = [n for n, line in enumerate(lines) if "PPOConfig feeds this project's own trainer" in line]
        assert len(marks) == 1 and "import PPOConfig" in lines[marks[0] + 1], out.text
        assert "".join(lines[:marks[0]] + lines[marks[0] + 1:]) == source
    # a field named like a step-loop one on another call (`Process(target=...)`) says nothing of the config
    other_call = trainer_style + "\n\nworker = Process(target=print)\n"
    assert "from compat.trl import PPOConfig" in _migrate_at(tmp_path / "src" / "other.py", other_call).text
    # TRL's own PPOTrainer beside a Trainer subclass of the project: the script is migrated as before
    own = ("from transformers import Trainer\nfrom trl import PPOConfig, PPOTrainer\n\n\nclass Helper(Trainer):\n"
           "    pass\n\n\nconfig = PPOConfig(learning_rate=1e-5)\ntrainer = PPOTrainer(config, model, ref, tok)\n")
    assert "GRPOConfig(" in _migrate_at(tmp_path / "x.py", own).text
    # jackfsuia/nanoRLHF: the same import with TRL's PPOTrainer unused, the config going to the project's own
    # trainer (a copy of TRL 0.1x's Trainer-based PPOTrainer): the unused import is dropped (TRL 1.16 has no
    # PPOTrainer) and the config subclass derives from the compat copy
    (tmp_path / "grpo_trainer.py").write_text(trainer.replace("PPOv2Trainer", "GRPOTrainer"), encoding="utf-8")
    script = ("from trl import ModelConfig, PPOConfig, PPOTrainer\n\nfrom grpo_trainer import GRPOTrainer\n\n\n"
              "class GRPOConfig(PPOConfig):\n    pass\n\n\nconfig = GRPOConfig(total_episodes=64, kl_coef=0.05)\n"
              "trainer = GRPOTrainer(config=config, policy=None)\n")
    out = _migrate_at(tmp_path / "grpo.py", script)
    assert out.text == script.replace("from trl import ModelConfig, PPOConfig, PPOTrainer\n",
                                      "from trl import ModelConfig\nfrom compat.trl import PPOConfig\n"), out.text
    assert not [f for f in out.findings if f.severity == "manual"]


def test_a_copy_of_the_step_loop_trainer_keeps_its_config_after_every_rule(tmp_path: Path) -> None:
    """yongzhuo/chatglm-maths's models/ppo_trainer.py, a copy of TRL 0.4's PPOTrainer on `BaseTrainer`: the rule
    `removed-trainer-utils` moves `BaseTrainer` to compat.trl first, and the class then no longer looked like a copy of
    a TRL trainer, so its `PPOConfig` became GRPOConfig (`isinstance(config, GRPOConfig)` then refused the scripts'
    PPOConfig). With every rule, it is TRL 0.11's step-loop config, compat.trl.ClassicPPOConfig, as in the scripts."""
    fork = ("from trl.trainer import BaseTrainer, PPOConfig\n\n\nclass PPOTrainer(BaseTrainer):\n"
            "    def __init__(self, config: PPOConfig = None) -> None:\n"
            "        if not isinstance(config, PPOConfig):\n            raise ValueError(config)\n"
            "        self.config = config\n")
    (tmp_path / "ppo_trainer.py").write_text(fork, encoding="utf-8")
    migrate_paths([str(tmp_path)], allow_dirty=True)
    out = (tmp_path / "ppo_trainer.py").read_text(encoding="utf-8")
    assert "GRPOConfig" not in out and "isinstance(config, ClassicPPOConfig)" in out, out
    assert "from compat.trl import BaseTrainer, ClassicPPOConfig\n" in out and "TODO" not in out


_STEP_LOOP_FORK = ("from trl.trainer import BaseTrainer, PPOConfig\n\n\nclass PPOTrainer(BaseTrainer):\n"
                   "    def __init__(self, config: PPOConfig = None, model=None) -> None:\n"
                   "        self.config = config\n")


def test_the_config_of_a_copy_of_the_step_loop_trainer_is_compats_classic_config(tmp_path: Path) -> None:
    """yongzhuo/chatglm-maths, hirooms2/Learning2Interact: scripts build TRL's step-loop PPOConfig for the project's
    copy of the step-loop PPOTrainer (on BaseTrainer). It moves to compat.trl.ClassicPPOConfig (TRL 0.11.4's class);
    each call gets the defaults of the releases the code ran on where 0.11.4's differ (the pin, the atlas: 0.4 - 0.7.10
    trained with batch_size 256, mini_batch_size 1, learning_rate 1e-5), or a marker where the pin does not say."""
    def project(name: str, pin: str) -> Path:  # a project of its own per pin (pins are read once per folder)
        folder = tmp_path / name
        folder.mkdir()
        (folder / "ppo_trainer.py").write_text(_STEP_LOOP_FORK, encoding="utf-8")
        (folder / "requirements.txt").write_text(pin, encoding="utf-8")
        return folder

    script = ("from trl import PPOConfig\n\nfrom ppo_trainer import PPOTrainer\n\n"
              "config = PPOConfig(model_name=\"chatglm\", batch_size=8, ppo_epochs=2)\n"
              "trainer = PPOTrainer(config, model)\n")
    out = _migrate_at(project("old", "trl==0.4.7\n") / "ppo.py", script)
    assert out.text == script.replace("from trl import PPOConfig", "from compat.trl import ClassicPPOConfig").replace(
        "PPOConfig(model_name=\"chatglm\", batch_size=8, ppo_epochs=2)",
        "ClassicPPOConfig(model_name=\"chatglm\", batch_size=8, ppo_epochs=2, learning_rate=1e-05, mini_batch_size=1)"
    ), out.text
    assert not [f for f in out.findings if f.severity == "manual"]
    # a 0.7.11 - 0.11 pin: 0.11.4's defaults are the code's, nothing to write
    out = _migrate_at(project("newer", "trl>=0.8,<0.12\n") / "ppo.py", script)
    assert "ClassicPPOConfig(model_name=\"chatglm\", batch_size=8, ppo_epochs=2)\n" in out.text and "TODO" not in out.text
    # no pin: the defaults changed in 0.7.11, which side the code ran on is unknown: marked at the call
    unpinned = project("unpinned", "torch\n")
    out = _migrate_at(unpinned / "ppo.py", script.replace("ppo_epochs=2)", "ppo_epochs=2, early_stopping=True)"))
    [msg] = [f.message for f in out.findings if f.severity == "manual"]
    assert msg == ("ClassicPPOConfig has TRL 0.11's defaults, and the releases this code may have run on had others: "
                   "learning_rate (1e-05 in 0.4.2..0.7.10; 1.41e-05 in 0.7.11..0.11.4); mini_batch_size (1 in "
                   "0.4.2..0.7.10; 128 in 0.7.11..0.11.4); target_kl (0.1 in 0.4.2..0.7.1; 1.0 in 0.7.2..0.11.4). "
                   "Pin trl, or set these keywords"), msg  # early stopping reads target_kl (0.4.2 on: the field)
    # the trainer module only annotates the config: moved, nothing to write or mark there
    out = _migrate_at(unpinned / "ppo_trainer.py", _STEP_LOOP_FORK)
    assert out.text == _STEP_LOOP_FORK.replace("from trl.trainer import BaseTrainer, PPOConfig",
                                               "from compat.trl import BaseTrainer, ClassicPPOConfig").replace(
        "config: PPOConfig", "config: ClassicPPOConfig") or "from compat.trl import ClassicPPOConfig" in out.text
    assert "TODO" not in out.text, out.text
    # a config the module hands to a parser: built with the class defaults there, so the import is marked
    parsed = ("from transformers import HfArgumentParser\nfrom trl import PPOConfig\n\nfrom ppo_trainer import "
              "PPOTrainer\n\nconfig, = HfArgumentParser((PPOConfig,)).parse_args_into_dataclasses()\n"
              "trainer = PPOTrainer(config, model)\n")
    out = _migrate_at(unpinned / "parsed.py", parsed)
    assert "# TODO(trl-compat): ClassicPPOConfig has TRL 0.11's defaults" in out.text
    assert "HfArgumentParser((ClassicPPOConfig,))" in out.text


def test_a_config_built_from_a_dict_says_which_ppo_defaults_it_relied_on() -> None:
    """`PPOConfig(**cfg["ppo"])` from YAML: the keys are renamed by hand, and every key the dict does not set took
    PPO's default, which GRPOConfig does not share (KL 0.2 -> beta 0.0, no KL term; 4 PPO epochs -> 1 iteration):
    the marker said only to rename the keys."""
    src = ("import yaml\nfrom trl import PPOConfig, PPOTrainer\n\ncfg = yaml.safe_load(open(\"c.yaml\"))\n"
           "config = PPOConfig(**cfg[\"ppo\"])\ntrainer = PPOTrainer(config, model, ref, tok, dataset=ds)\n")
    [msg] = [f.message for f in migrate(src).findings if "not visible statically" in f.message]
    assert msg.endswith("a key it does not set takes GRPOConfig's default, not PPO's: beta=0.2 (init_kl_coef), "
                        "num_iterations=4 (ppo_epochs), per_device_train_batch_size=128 (mini_batch_size), "
                        "epsilon=0.2 (cliprange) in PPO; set those the dict does not"), msg
    trainer_style = src.replace("PPOTrainer(config, model, ref, tok, dataset=ds)",
                                "PPOTrainer(args=config, processing_class=tok, model=model, ref_model=ref, "
                                "reward_model=rm, value_model=vm, train_dataset=ds)")
    [msg] = [f.message for f in migrate(trainer_style).findings if "not visible statically" in f.message]
    assert "beta=0.05 (kl_coef), num_iterations=4 (num_ppo_epochs), max_completion_length=53 (response_length)" in msg


def test_classic_config_paths_are_the_atlas_exporters() -> None:
    from packaging.version import Version

    from migrations.atlas import Atlas
    from migrations.v1_13.ppo_to_grpo.classic_config import CLASSIC_CONFIG_PATHS

    atlas = Atlas.load("trl")
    exporters = {f"{m}.PPOConfig" for v in atlas.releases() if Version(v) < Version("0.12")
                 for m in atlas.modules(v) if atlas.has(v, f"{m}.PPOConfig") and not m.startswith("trl.commands")}
    assert set(CLASSIC_CONFIG_PATHS) == exporters


def test_a_trl_import_that_a_later_import_binds_again_is_dropped(tmp_path: Path) -> None:
    """jackfsuia/nanoRLHF's PPO/ppo.py: `from trl import ModelConfig, PPOConfig, PPOTrainer`, a dozen imports, then
    `from ppo_trainer import PPOTrainer` (the project's copy) before any use: TRL's PPOTrainer is never read. It was
    marked "may be this project's own class"; the dead alias goes and the config follows the project's trainer.
    A rebinding in a branch, or a use between the two, is left as it was (which class a call builds is decided at
    run time there)."""
    trainer = ("from transformers import Trainer\nfrom trl import PPOConfig\n\n\n"
               "class PPOTrainer(Trainer):\n    def __init__(self, config: PPOConfig, policy) -> None:\n"
               "        self.args = config\n")
    (tmp_path / "ppo_trainer.py").write_text(trainer, encoding="utf-8")
    script = ("import os\nfrom trl import ModelConfig, PPOConfig, PPOTrainer\nimport json\n"
              "from ppo_trainer import PPOTrainer\n\nconfig = PPOConfig(total_episodes=8)\n"
              "trainer = PPOTrainer(config=config, policy=None)\n")
    out = _migrate_at(tmp_path / "ppo.py", script)
    assert out.text == script.replace("from trl import ModelConfig, PPOConfig, PPOTrainer\n",
                                      "from trl import ModelConfig\nfrom compat.trl import PPOConfig\n"), out.text
    assert any("dropped TRL's PPOTrainer" in f.message and "ppo_trainer" in f.message for f in out.findings)
    for source in (script.replace("from ppo_trainer import PPOTrainer\n",
                                  "if os.environ.get(\"OWN\"):\n    from ppo_trainer import PPOTrainer\n"),
                   script.replace("import json\n", "print(PPOTrainer)\n")):
        out = _migrate_at(tmp_path / "branch.py", source)
        assert "from trl import ModelConfig, PPOConfig, PPOTrainer\n" in out.text
        assert "may be this project's own class" in out.text or "feeds this project's own trainer" in out.text


def test_ppov2_config_paths_are_the_atlas_exporters() -> None:
    from migrations.atlas import Atlas
    from migrations.v1_13.ppo_to_grpo import PPOV2_CONFIG_PATHS

    atlas = Atlas.load("trl")
    exporters = {f"{m}.PPOv2Config" for v in atlas.releases() for m in atlas.modules(v) if atlas.has(v, f"{m}.PPOv2Config")}
    assert set(PPOV2_CONFIG_PATHS) == exporters


def test_fields_read_by_the_project_files_the_config_reaches_are_marked(tmp_path: Path) -> None:
    """outsmart-ai-detection: config.py builds `config = PPOConfig(model_name=...)`, model.py and dataset.py
    import it and read `config.model_name` (AttributeError on GRPOConfig, in files that import no TRL); babylm
    hands its config to its own dataset builder, which reads it. The config statement says where."""
    (tmp_path / "model.py").write_text("from config import config\n\nname = config.model_name\n", encoding="utf-8")
    (tmp_path / "unrelated.py").write_text("name = args.model_name\n", encoding="utf-8")
    (tmp_path / "builder.py").write_text(
        "class Builder:\n    def __init__(self, cfg):\n        self.name = cfg.model_name\n        self.bs = cfg.batch_size\n",
        encoding="utf-8")
    out = _migrate_at(tmp_path / "config.py", "from trl import PPOConfig\n\nconfig = PPOConfig(model_name=\"gpt2\")\n")
    [msg] = [f.message for f in out.findings if "other files" in f.message]
    assert msg.startswith("model.py .model_name read from this config in other files, but GRPOConfig has no such")
    handed = ("from trl import PPOConfig\nfrom builder import Builder\n\n"
              "cfg = PPOConfig(model_name=\"gpt2\", batch_size=8)\nb = Builder(cfg)\n")
    out = _migrate_at(tmp_path / "main.py", handed)
    [msg] = [f.message for f in out.findings if "other files" in f.message]
    assert msg.startswith("builder.py .batch_size, builder.py .model_name read from this config in other files")
    alone = "from trl import PPOConfig\n\ncfg = PPOConfig(model_name=\"gpt2\")\n"  # nobody reads it elsewhere
    assert not [f for f in _migrate_at(tmp_path / "solo.py", alone).findings if "other files" in f.message]


def test_a_converted_loop_whose_config_is_built_elsewhere_says_which_values_to_set() -> None:
    """outsmart-ai-detection builds its PPOConfig in config.py and imports it into train.py: the loop's epochs and
    generation settings had no config call here to go to, and the marker said they had moved to the config."""
    src = (
        "from trl import PPOTrainer\nfrom config import config\n\n"
        "trainer = PPOTrainer(config, model=model, tokenizer=tokenizer, dataset=dataset)\n"
        "gen = {\"max_new_tokens\": 32, \"do_sample\": True}\n"
        "for epoch in range(3):\n"
        "    for batch in trainer.dataloader:\n"
        "        q = batch[\"input_ids\"]\n"
        "        r = trainer.generate(q, **gen)\n"
        "        texts = [tokenizer.decode(x) for x in r]\n"
        "        rewards = score(texts)\n"
        "        stats = trainer.step(q, r, rewards)\n"
    )
    result = migrate(src)
    assert result.ok, result.errors
    [msg] = [f.message for f in result.findings if "step loop was replaced" in f.message]
    assert "the config is built in another file: set num_train_epochs=3, max_completion_length=32 on it" in msg
    assert "moved to the config" not in msg


_LOOP = (
    "from trl import PPOTrainer, PPOConfig\n\n"
    "def train(model, tokenizer, dataset):\n"
    "    config = PPOConfig(batch_size=8)\n"
    "    trainer = PPOTrainer(config, model=model, tokenizer=tokenizer, dataset=dataset)\n"
    "    history = []\n"
    "    gen = dict(max_new_tokens=32, top_k=50, top_p=0.9, temperature=0.7, eos_token_id=tokenizer.eos_token_id)\n"
    "    for step, batch in enumerate(trainer.dataloader):\n"
    "        q = batch[\"input_ids\"]\n"
    "        r = trainer.generate(q, **gen)\n"
    "        texts = [tokenizer.decode(x) for x in r]\n"
    "        rewards = score(texts)\n"
    "        stats = trainer.step(q, r, rewards)\n"
    "{extra}"
    "    {after}\n"
)


@pytest.mark.parametrize("after", ["save(trainer.model, step)", "plot(history)"])
def test_a_loop_whose_values_are_read_after_it_is_not_converted(after: str) -> None:
    """deepradadiya/RLHF-Pipeline saves `step` after the PPO loop (a NameError once the loop is gone); a list the
    loop fills would be empty: such a loop stays as written, with the step-loop marker saying why."""
    extra = "        history.append(stats)\n" if "history" in after else ""
    result = migrate(_LOOP.format(extra=extra, after=after))
    assert result.ok, result.errors
    assert "trainer.step(q, r, rewards)" in result.text and ".train()" not in result.text
    [msg] = [f.message for f in result.findings if "step loop was not converted" in f.message]
    name = "step" if "step" in after else "history"
    assert f"code after the loop reads {name}, which the loop binds or fills" in msg


def test_a_loop_whose_names_are_bound_again_after_it_is_converted() -> None:
    result = migrate(_LOOP.format(extra="", after="step = 0\n    print(step)"))
    assert result.ok and "trainer.train()" in result.text, result.text


def test_generation_settings_written_as_a_dict_call_move_to_the_config() -> None:
    """kartikmunjal/rlhf-and-reward-modelling-alt: `generation_kwargs = dict(max_new_tokens=..., top_k=50, ...)`
    was skipped (only `{...}` literals were read) while the marker said the settings had moved; a value that is no
    literal is named in the marker instead."""
    src = _LOOP.format(extra="", after="print('done')").replace("max_new_tokens=32", "max_new_tokens=cfg.n")
    result = migrate(src)
    assert result.ok, result.errors
    text = result.text
    assert "top_k=50," in text and "top_p=0.9," in text and "temperature=0.7," in text, text
    [msg] = [f.message for f in result.findings if "step loop was replaced" in f.message]
    assert "(generation setting max_new_tokens=cfg.n: set max_completion_length on the config)" in msg


def test_a_log_with_that_may_be_none_reports_to_none() -> None:
    """Classic `log_with=None` meant no tracker; TrainingArguments takes `report_to=None` as every installed
    integration on transformers 4.56 and keeps `[None]` on 5.x (babylm: `log_with=ppo_cfg.get("log_with", None)`)."""
    src = ("from trl import PPOConfig\n\na = PPOConfig(log_with=cfg.get(\"log_with\", None))\n"
           "b = PPOConfig(log_with=\"wandb\" if use_wandb else None)\nc = PPOConfig(log_with=None)\n"
           "d = PPOConfig(log_with=\"wandb\")\n")
    text = migrate(src).text
    assert 'report_to=cfg.get("log_with", None) or "none",' in text
    assert 'report_to=("wandb" if use_wandb else None) or "none",' in text
    assert text.count('report_to="none",') == 1 and text.count('report_to="wandb",') == 1


@pytest.mark.parametrize(("call", "expected", "absent"), [
    ("super().__init__(config, model, ref_model, tokenizer, dataset=dataset, data_collator=collate)",
     ["takes (model, reward_funcs, args, train_dataset, ...) but MyTrainer passes 4 positional argument(s)",
      "it takes train_dataset= not dataset=", "drop data_collator=", "pass reward_funcs="], ["args= not config="]),
    ("PPOTrainer.__init__(self, config=cfg, model=model, tokenizer=tok, optimizer=opt, lr_scheduler=sched)",
     ["GRPOTrainer.__init__ takes args= not config=, processing_class= not tokenizer=, optimizers=(optimizer, "
      "lr_scheduler) not optimizer=/lr_scheduler=", "pass reward_funcs="], ["positional", "drop "]),
    ("super().__init__(*args, reward_model=rm, **kwargs)",
     ["reward_funcs= not reward_model=", "MyTrainer forwards *args/**kwargs"], ["pass reward_funcs="]),
])
def test_a_subclass_constructor_call_is_marked_with_what_it_passes(call: str, expected: list[str],
                                                                   absent: list[str]) -> None:
    """A PPO subclass's call of the PPO constructor is not rewritten (the subclass was written against PPO's
    constructor and internals); its marker lists, for this call, what GRPOTrainer takes instead, its problem first."""
    src = ("from trl import PPOTrainer\n\n\nclass MyTrainer(PPOTrainer):\n"
           "    def __init__(self, *args, **kwargs):\n"
           f"        {call}\n")
    result = migrate(src)
    assert result.ok, result.errors
    [msg] = [f.message for f in result.findings if "was written against PPO's constructor" in f.message]
    for part in expected:
        assert part in msg
    for part in absent:
        assert part not in msg
    assert call.replace("PPOTrainer", "GRPOTrainer") in result.text  # the call left as it was (the base renamed)


def test_a_trainer_name_bound_by_the_project_too_is_left_as_written() -> None:
    """Silent-Zebra/twisted-smc-lm test_ppo.py: `from custom_ppo_trainer import PPOTrainer` in one branch, `from trl
    import PPOTrainer` in the other, one call after both: the call was rewritten to GRPOTrainer, so the project's
    own trainer was never used. Now nothing is rewritten and each TRL import is marked."""
    src = ("from trl import PPOConfig\n\n"
           "def main(custom):\n"
           "    if custom:\n"
           "        from custom_ppo_trainer import PPOTrainer\n"
           "    else:\n"
           "        from trl import PPOTrainer\n"
           "    config = PPOConfig(batch_size=8)\n"
           "    return PPOTrainer(config, model, ref_model, tokenizer)\n")
    result = migrate(src)
    assert result.ok, result.errors
    assert "GRPO" not in result.text and "PPOTrainer(config, model, ref_model, tokenizer)" in result.text
    assert result.text.count("may be this project's own class here") == 2, result.text


def test_a_copy_of_the_step_loop_trainer_keeps_its_config() -> None:
    """twisted-smc-lm's custom_ppo_trainer.py keeps TRL 0.7's PPOTrainer (on `BaseTrainer`), typed with TRL's
    PPOConfig and reading its PPO fields: the config is TRL 0.11's step-loop one, compat.trl.ClassicPPOConfig (it
    was kept as written and marked before trl-compat kept that class)."""
    src = ("from trl.trainer import BaseTrainer, PPOConfig\n\n\n"
           "class PPOTrainer(BaseTrainer):\n"
           "    def __init__(self, config: PPOConfig = None):\n"
           "        if not isinstance(config, PPOConfig):\n"
           "            raise ValueError(config)\n"
           "        self.kl = config.init_kl_coef\n")
    result = migrate(src)
    assert result.ok, result.errors
    assert "GRPOConfig" not in result.text and "config: ClassicPPOConfig = None" in result.text
    assert "from compat.trl import ClassicPPOConfig\n" in result.text and "TODO" not in result.text
    # a field of the Trainer-style config read as well: which config this is, the code does not say
    mixed = migrate(src + "        self.episodes = config.total_episodes\n")
    assert "config: PPOConfig = None" in mixed.text
    assert any("own trainer (PPOTrainer" in f.message for f in mixed.findings)


def test_a_trainer_returned_by_a_method_is_a_trainer() -> None:
    """JumpyPizza/align-sentence-simplification-with-ESL-learner: `self.ppo_trainer = self._init_ppo_trainer()`, a
    method returning `PPOTrainer(config, ...)`. The loop's `.generate` / `.step` / `.log_stats` got no marker (inside
    `try: ... except Exception: print(e)` every batch printed an AttributeError and nothing trained); now they are
    the trainer's, marked, and `save_pretrained` is `save_model` as for any PPO trainer."""
    src = ("from trl import PPOConfig, PPOTrainer\n\n\n"
           "class Runner:\n"
           "    def __init__(self, model, tokenizer):\n"
           "        self.model, self.tokenizer = model, tokenizer\n"
           "        self.ppo_trainer = self._init_ppo_trainer()\n\n"
           "    def _init_ppo_trainer(self):\n"
           "        config = PPOConfig(batch_size=8, mini_batch_size=8)\n"
           "        return PPOTrainer(config, self.model, None, self.tokenizer)\n\n"
           "    def train(self, batches):\n"
           "        for batch in batches:\n"
           "            try:\n"
           "                response = self.ppo_trainer.generate(batch)\n"
           "                stats = self.ppo_trainer.step(batch, response, [1.0])\n"
           "            except Exception as e:\n"
           "                print(e)\n"
           "        self.ppo_trainer.save_pretrained('out')\n")
    result = migrate(src)
    assert result.ok, result.errors
    messages = [f.message for f in result.findings if f.severity == "manual"]
    assert any(m.startswith("self.ppo_trainer.generate() does not exist on GRPOTrainer") for m in messages)
    assert any(m.startswith("self.ppo_trainer.step() does not exist on GRPOTrainer") for m in messages)
    assert "# TODO(trl-compat): self.ppo_trainer.step() does not exist" in result.text
    assert "self.ppo_trainer.save_model('out')" in result.text


def test_the_prompt_rebuild_is_written_only_for_a_tokenized_dataset(tmp_path: Path) -> None:
    """The `input_ids` -> `prompt` rebuild needs a datasets.Dataset holding ids. linjiax7/PPO loads its dataset raw
    and tokenizes `batch["text"]` in the loop (no ids: a KeyError); streambe-medical's `build_ppo_dataset` (another
    module) returns a list (no `.column_names`): both are flagged, not rebuilt. A dataset the file maps, or builds in
    a function of its own (TRL's gpt2-sentiment `build_dataset`), gets the rebuild."""
    head = ("from datasets import load_dataset\nfrom trl import PPOConfig, PPOTrainer\n"
            "from rlhf_utils import build_ppo_dataset\n\n")
    tail = "trainer = PPOTrainer(PPOConfig(batch_size=8), model, ref, tok, dataset=ds)\n"
    for binding in ('ds = load_dataset("imdb", split="train")\n', "ds = build_ppo_dataset(raw, tok)\n",
                    "ds = [tok(t) for t in texts]\n"):
        result = _migrate_at(tmp_path / "ppo.py", head + binding + tail)
        assert "column_names" not in result.text, binding
        assert any(f.anchor == "ppo-dataset-prompt" and "give it a `prompt` column yourself" in f.message
                   for f in result.findings), binding
    for binding in ('ds = load_dataset("imdb", split="train").map(lambda e: {"input_ids": tok.encode(e["t"])[:8]})\n',
                    "def build_dataset(config):\n    return load_dataset('imdb')\n\nds = build_dataset(c)\n"):
        result = _migrate_at(tmp_path / "ppo.py", head + binding + tail)
        assert 'if "prompt" not in ds.column_names:' in result.text, binding


def test_a_dataset_read_after_the_trainer_keeps_its_input_ids(tmp_path: Path) -> None:
    """TRL's gpt2-sentiment notebook (and its copies: Yancy456/TRL, WMWMW1's bloom notebook) compares the model
    before and after training on `dataset[:].sample(bs)["input_ids"]` after `ppo_trainer.train()`: the rebuilt
    prompts go to a new name, given to the trainer, and `dataset` keeps its ids. Read by nothing after the trainer,
    the dataset is rebuilt in place, as before."""
    head = ("from datasets import load_dataset\nfrom trl import PPOConfig, PPOTrainer\n\n"
            'ds = load_dataset("imdb", split="train").map(lambda e: {"input_ids": tok.encode(e["t"])[:8]})\n'
            "ds_prompts = 1\n"
            "trainer = PPOTrainer(PPOConfig(batch_size=8), model, ref, tok, dataset=ds)\n")
    result = _migrate_at(tmp_path / "ppo.py", head + 'ids = ds[:]["input_ids"]\n')
    assert "ds_prompts_ = ds\n" in result.text and "train_dataset=ds_prompts_," in result.text, result.text
    assert 'ds_prompts_ = ds_prompts_.with_format(None).map(' in result.text
    assert 'ids = ds[:]["input_ids"]' in result.text and "ds = ds.with_format" not in result.text
    compile(result.text, "ppo.py", "exec")
    result = _migrate_at(tmp_path / "ppo.py", head + "print(trainer.model)\n")
    assert "ds = ds.with_format(None).map(" in result.text and "ds_prompts_" not in result.text


def test_a_trainer_subclass_with_a_second_base_is_marked_at_the_class(tmp_path: Path) -> None:
    """KMnO4-zx/huanhuan-chat: `class PPOTrainerForChatGLM(PPOTrainer, PeftTrainer)`, PeftTrainer a Seq2SeqTrainer.
    The classic PPOTrainer was no transformers Trainer; GRPOTrainer is, so its super().__init__ reaches PeftTrainer."""
    src = ("from trl import PPOTrainer\nfrom pet.core.trainer import PeftTrainer\n\n\n"
           "class PPOTrainerForChatGLM(PPOTrainer, PeftTrainer):\n    def ppo_train(self):\n        pass\n")
    result = _migrate_at(tmp_path / "trainer.py", src)
    assert "class PPOTrainerForChatGLM(GRPOTrainer, PeftTrainer):" in result.text
    [message] = [f.message for f in result.findings if "method resolution order" in f.message]
    assert message.startswith("PPOTrainerForChatGLM now derives from GRPOTrainer (a transformers Trainer) and "
                              "PeftTrainer: if PeftTrainer is a Trainer too")


def test_an_attribute_of_the_ppo_trainer_class_is_marked(tmp_path: Path) -> None:
    """marcellobullo/sharedrep-rlhf patches `get_reward` into `importlib.import_module(PPOTrainer.__module__)`: renamed
    with the class, the patch lands in the GRPO trainer's module, which never calls it."""
    src = ("import importlib\nfrom trl import PPOConfig, PPOTrainer\n\n"
           "m = importlib.import_module(PPOTrainer.__module__)\nm.get_reward = lambda *a: None\n"
           "trainer = PPOTrainer(args=PPOConfig(kl_coef=0.05), processing_class=tok, model=policy, ref_model=ref,\n"
           "                     reward_model=reward, value_model=value, train_dataset=ds)\ntrainer.train()\n")
    result = _migrate_at(tmp_path / "ppo.py", src)
    assert "m = importlib.import_module(GRPOTrainer.__module__)" in result.text
    assert [f for f in result.findings if f.message.startswith("PPOTrainer.__module__: an attribute")]
    lines = result.text.splitlines()
    at = lines.index("m = importlib.import_module(GRPOTrainer.__module__)")
    assert lines[at - 1].startswith("# TODO(trl-compat): PPOTrainer.__module__: an attribute")


def test_the_policy_and_value_model_of_the_ppo_trainers_model_are_marked(tmp_path: Path) -> None:
    """HollyRiver/HFRL: `trainer.model.policy.print_trainable_parameters()` after a Trainer-style PPOTrainer, whose
    model was a PolicyAndValueWrapper; GRPOTrainer's model is the policy itself (an AttributeError before train())."""
    source = ("from trl import PPOConfig, PPOTrainer\n\nconfig = PPOConfig(output_dir='o', total_episodes=10)\n"
              "trainer = PPOTrainer(args=config, processing_class=tok, model=policy, ref_model=ref, reward_model=rm, "
              "value_model=vm, train_dataset=ds)\ntrainer.model.policy.print_trainable_parameters()\n"
              "n = trainer.model.value_model.num_parameters()\nm = trainer.model.config\n")
    result = _migrate_at(tmp_path / "ppo.py", source)
    marked = [f for f in result.findings if f.anchor == "ppo-trainer-attributes"]
    assert [m.message.split(":")[0] for m in marked] == ["trainer.model.policy", "trainer.model.value_model"]
    assert "trainer.model.config" in result.text
