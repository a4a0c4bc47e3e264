"""`trl-compat check`: the static API check (against the atlas) and the marker ledger, on fresh era-style code.

Every expectation about what a TRL release has was read from its wheel (see tests/atlas/test_atlas_facts.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from compat.check import check_source, choose_target
from compat.check.analyze import Checker
from compat.check.cli import main


@pytest.fixture(scope="module")
def c116() -> Checker:
    return Checker("1.16.0")


def problems(checker: Checker, code: str) -> list[tuple[int, str, str]]:
    return [(p.line, p.code, p.name) for p in checker.check(textwrap.dedent(code))]


def test_era_sft_and_dpo_scripts_are_flagged_at_their_lines(c116):
    code = """\
        from trl import SFTTrainer, DPOTrainer, ORPOConfig, setup_chat_format
        from trl.trainer.utils import SIMPLE_CHAT_TEMPLATE
        from trl.commands.cli_utils import TrlParser
        from transformers import TrainingArguments

        trainer = SFTTrainer(model, args=TrainingArguments("o"), tokenizer=tok,
                             max_seq_length=512, dataset_text_field="text", packing=True)
        dpo = DPOTrainer(model, ref, args=TrainingArguments("o"), beta=0.1, tokenizer=tok, max_length=512)
        """
    found = problems(c116, code)
    assert (1, "missing-name", "trl.ORPOConfig") in found
    assert (1, "missing-name", "trl.setup_chat_format") in found
    assert (2, "missing-name", "trl.trainer.utils.SIMPLE_CHAT_TEMPLATE") in found
    assert (3, "missing-module", "trl.commands.cli_utils") in found
    assert (6, "unknown-keyword", "trl.SFTTrainer(tokenizer=)") in found
    assert (7, "unknown-keyword", "trl.SFTTrainer(max_seq_length=)") in found
    assert (7, "unknown-keyword", "trl.SFTTrainer(packing=)") in found
    # DPOTrainer(model, ref, ...): the second positional is not ref_model any more in 1.16
    assert (8, "unknown-keyword", "trl.DPOTrainer(beta=)") in found
    assert (8, "unknown-keyword", "trl.DPOTrainer(max_length=)") in found
    assert not any(code == "missing-name" and "SFTTrainer" in name for _, code, name in found)
    by_name = {p.name: p for p in c116.check(textwrap.dedent(code))}
    assert by_name["trl.SFTTrainer(tokenizer=)"].since == "0.16.0"
    assert "SFTConfig(packing=...)" in by_name["trl.SFTTrainer(packing=)"].message
    assert by_name["trl.ORPOConfig"].since == "0.29.0"


def test_attribute_access_and_aliases(c116):
    found = problems(c116, """\
        import trl
        import trl.trainer as tt
        x = trl.get_kbit_device_map()
        y = tt.utils.SIMPLE_CHAT_TEMPLATE
        ok = trl.SFTConfig(output_dir="o", max_length=10)
        bad = trl.SFTConfig(output_dir="o", max_seq_length=10)
        """)
    assert found == [(3, "missing-name", "trl.get_kbit_device_map"),
                     (4, "missing-name", "trl.trainer.utils.SIMPLE_CHAT_TEMPLATE"),
                     (6, "unknown-keyword", "trl.SFTConfig(max_seq_length=)")]


def test_positionals_subclasses_and_explicit_init(c116):
    found = problems(c116, """\
        from trl import SFTTrainer, SFTConfig
        SFTConfig("out", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
                  26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50,
                  51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75,
                  76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100,
                  101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120,
                  121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140)

        class MyTrainer(SFTTrainer):
            def __init__(self, model, tok, **kw):
                super().__init__(model=model, tokenizer=tok, **kw)

        class Other(SFTTrainer):
            def __init__(self, model, tok):
                SFTTrainer.__init__(self, model, None, None, None, None, tok, None, None, None, None, None, None,
                                    None, None, None, None)
        SFTTrainer()
        """)
    assert (2, "too-many-positional", "trl.SFTConfig") in found
    assert (11, "unknown-keyword", "trl.SFTTrainer(tokenizer=)") in found
    assert (15, "too-many-positional", "trl.SFTTrainer") in found
    assert (17, "missing-argument", "trl.SFTTrainer") in found


def test_names_that_only_look_like_trl_are_left_alone(c116):
    assert problems(c116, """\
        from .trl import PPOTrainer, ORPOConfig          # a vendored copy
        from . import trl
        from mylib.trl import SFTTrainer
        s = "SFTTrainer(tokenizer=tok)"                  # a string
        # SFTTrainer(tokenizer=tok) in a comment

        class ORPOTrainer:                               # a local class
            def __init__(self, tokenizer=None):
                pass

        ORPOTrainer(tokenizer=1)
        SFTTrainer(tokenizer=1, max_seq_length=3)
        trl.get_kbit_device_map()
        """) == []


def test_module_level_global_statement_terminates(c116):
    """`global x` at module level is legal and a no-op (a research repository of the corpus has one); the name lookup
    once followed it from the module to the module forever."""
    found = problems(c116, """\
        import trl
        global trl, model

        def f():
            global model
            return trl.get_kbit_device_map(), model
    """)
    assert [(line, name) for line, _, name in found] == [(6, "trl.get_kbit_device_map")]


def test_shadowing_is_scope_aware(c116):
    found = problems(c116, """\
        from trl import SFTTrainer
        import trl

        def build(SFTTrainer, trl):                      # parameters shadow the imports
            trl.get_kbit_device_map()
            return SFTTrainer(tokenizer=1)

        def inner():
            def f():
                return SFTTrainer(tokenizer=2)           # the module's SFTTrainer
            return f

        class K:
            SFTTrainer = dict
            def m(self):
                return SFTTrainer(tokenizer=3)           # class bodies do not scope methods

        def g():
            SFTTrainer = make()
            return SFTTrainer(tokenizer=4)              # a local assignment

        [SFTTrainer for SFTTrainer in range(3)]
        lambda SFTTrainer: SFTTrainer(tokenizer=5)

        def h():
            global SFTTrainer
            return SFTTrainer(tokenizer=6)
        """)
    found = [f for f in found if f[1] != "missing-argument"]  # no call passes `model`
    assert found == [(10, "unknown-keyword", "trl.SFTTrainer(tokenizer=)"),
                     (16, "unknown-keyword", "trl.SFTTrainer(tokenizer=)"),
                     (27, "unknown-keyword", "trl.SFTTrainer(tokenizer=)")]


def test_an_import_error_fallback_is_ambiguous_so_only_the_import_is_flagged(c116):
    found = problems(c116, """\
        try:
            from trl import PPOTrainer
        except ImportError:
            PPOTrainer = object
        PPOTrainer(config=1, tokenizer=2)
        """)
    assert found == [(2, "missing-name", "trl.PPOTrainer")]


def test_a_type_error_fallback_of_a_call_the_target_takes_is_not_flagged(c116):
    # Pavankunchala's financial_reasoning_enhanced.py: the new signature first, the old one if it raises TypeError
    found = problems(c116, """\
        from trl import GRPOTrainer, SFTTrainer
        try:
            t = GRPOTrainer(model=m, processing_class=tok, reward_funcs=[f])
        except TypeError:
            t = GRPOTrainer(model=m, tokenizer=tok, reward_funcs=[f])
        try:
            s = SFTTrainer(model=m, tokenizer=tok)
        except (ValueError, TypeError):
            s = SFTTrainer(model=m, dataset_text_field="text")
        try:
            t = GRPOTrainer(model=m, processing_class=tok, reward_funcs=[f])
        except ValueError:
            t = GRPOTrainer(model=m, tokenizer=tok, reward_funcs=[f])
        """)
    # the first handler never runs on the target; the second's try body fails too; the third catches no TypeError
    assert found == [(7, "unknown-keyword", "trl.SFTTrainer(tokenizer=)"),
                     (9, "unknown-keyword", "trl.SFTTrainer(dataset_text_field=)"),
                     (13, "unknown-keyword", "trl.GRPOTrainer(tokenizer=)")]


def test_a_missing_module_says_where_the_names_taken_from_it_live_now(c116):
    # trl.extras.vllm_client went in 0.28.0; its VLLMClient lives on (another signature) in trl.generation.vllm_client
    [p] = c116.check("from trl.extras.vllm_client import VLLMClient\n")
    assert (p.code, p.name) == ("missing-module", "trl.extras.vllm_client")
    assert p.message.startswith("TRL 1.16.0 has no module `trl.extras.vllm_client`: removed in 0.28.0; "
                                "1.16.0 has `trl.generation.vllm_client.VLLMClient`")
    [p] = c116.check("from trl.core import respond_to_batch\n")  # nothing of that name on 1.16: no such clause
    assert p.message == "TRL 1.16.0 has no module `trl.core`: removed in 0.25.0"


def test_1_13_and_1_16_differ():
    code = "from trl import prepare_multimodal_messages_vllm\nimport trl.losses\n"
    assert problems(Checker("1.13.0"), code) == []
    assert problems(Checker("1.16.0"), code) == [(1, "missing-name", "trl.prepare_multimodal_messages_vllm"),
                                                 (2, "missing-module", "trl.losses")]


def test_code_checks_clean_against_the_trl_it_was_written_for():
    code = """\
        from trl import PPOConfig, PPOTrainer, AutoModelForCausalLMWithValueHead, SFTTrainer
        from trl.core import LengthSampler
        config = PPOConfig(model_name="gpt2", learning_rate=1.41e-5, batch_size=16, mini_batch_size=4)
        trainer = PPOTrainer(config, model, ref_model, tokenizer, dataset=ds, data_collator=collator)
        sft = SFTTrainer(model, train_dataset=ds, dataset_text_field="text", max_seq_length=512, tokenizer=tok)
        """
    assert problems(Checker("0.8.6"), code) == []
    old = {p.name: p for p in Checker("0.4.1").check(textwrap.dedent(code))}
    assert old["trl.SFTTrainer"].code == "missing-name" and old["trl.SFTTrainer"].message.endswith(": added in 0.4.2")


def test_markers_and_notebooks(c116, tmp_path):
    nb = {"cells": [
        {"cell_type": "markdown", "source": ["# TODO(trl-compat): not code\n"]},
        {"cell_type": "code", "source": ["%pip install trl\n", "from trl import PPOTrainer\n"]},
        {"cell_type": "code", "source": "x = 1\n# TODO(trl-compat): [ppo-to-grpo] check rewards\n"},
        {"cell_type": "code", "source": "%%bash\necho trl\n"},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    result = check_source("n.ipynb", json.dumps(nb), c116)
    assert [(p.cell, p.line, p.code) for p in result.problems] == [(1, 2, "missing-name")]
    assert [(m.cell, m.line, m.rule) for m in result.markers] == [(2, 2, "ppo-to-grpo")]
    text = 's = "# TODO(trl-compat): in a string"\n# TODO(trl-compat): x (see MIGRATION.md#ppo)\n'
    py = check_source("a.py", text, c116)
    assert [(m.line, m.column, m.rule) for m in py.markers] == [(2, 1, "ppo")]
    req = check_source("requirements.txt", "trl>=1.16  # TODO(trl-compat): [pins] check\n", c116)
    assert [(m.line, m.rule) for m in req.markers] == [(1, "pins")]


def _write(tmp_path: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))


def test_cli_exit_codes_json_and_report(tmp_path, capsys):
    _write(tmp_path, {"clean.py": "from trl import SFTTrainer, SFTConfig\nSFTConfig(output_dir='o')\n",
                      "other.py": "print('no trl here')\n"})
    assert main([str(tmp_path), "--target-trl", "1.16"]) == 0
    _write(tmp_path, {"marked.py": "import os\n# TODO(trl-compat): [r] do it\n"})
    assert main([str(tmp_path), "--target-trl", "1.16"]) == 1
    assert main([str(tmp_path), "--target-trl", "1.16", "--accept-markers"]) == 0
    _write(tmp_path, {"bad.py": "from trl import PPOTrainer\n"})
    capsys.readouterr()
    report = tmp_path / "r.json"
    assert main([str(tmp_path), "--target-trl", "1.14", "--format", "json", "--report", str(report)]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data == json.loads(report.read_text())
    assert data["target"]["trl"] == "1.14.0" and data["target"]["transformers"]
    files = {Path(f["path"]).name: f for f in data["files"]}
    assert files["bad.py"]["problems"] == [{"line": 1, "column": 17, "code": "missing-name", "name": "trl.PPOTrainer",
                                            "message": files["bad.py"]["problems"][0]["message"], "since": "0.29.0",
                                            "cell": None}]
    assert files["marked.py"]["markers"][0]["rule"] == "r"
    assert data["summary"]["problems"] == 1 and data["summary"]["markers"] == 1 and data["summary"]["scanned"] == 4
    _write(tmp_path, {"broken.py": "import trl\ndef (:\n"})
    assert main([str(tmp_path), "--target-trl", "1.16"]) == 2
    assert main([str(tmp_path), "--target-trl", "0.3.1"]) == 2
    assert main([str(tmp_path / "nope")]) == 2
    assert main(["--bogus"]) == 2


def test_target_follows_the_repository_pins(tmp_path):
    _write(tmp_path, {"requirements.txt": "trl>=1.13,<1.15\n"})
    assert choose_target([str(tmp_path)]).trl == "1.14.0"  # what compat.migrate would migrate to
    assert choose_target([str(tmp_path)], "0.8.6").trl == "0.8.6"
    _write(tmp_path, {"requirements.txt": "trl==0.8.6\n", "sub/requirements-dev.txt": "trl<0.9\n"})
    pinned = choose_target([str(tmp_path)], "pinned")
    assert pinned.trl == "0.8.6" and pinned.transformers == "4.39.3" and "trl==0.8.6" in pinned.source
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main([str(empty), "--target-trl", "pinned"]) == 2


def test_the_command_never_imports_torch_or_trl(tmp_path):
    _write(tmp_path, {"t.py": "from trl import PPOTrainer\n"})
    code = ("import sys; from compat.check.cli import main; rc = main([sys.argv[1]]); "
            "print(rc, 'torch' in sys.modules, 'trl' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert out.stdout.split()[-4:] == ["1", "False", "False", "False"], out.stderr


def test_notebook_cells_share_one_namespace(c116):
    nb = {"cells": [
        {"cell_type": "code", "source": ["!pip install trl\n", "from trl import SFTTrainer\n"]},
        {"cell_type": "markdown", "source": ["text"]},
        {"cell_type": "code", "source": ["t = SFTTrainer(\n", "    model=m,\n", "    tokenizer=tok)\n"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    result = check_source("n.ipynb", json.dumps(nb), c116)
    assert [(p.cell, p.line, p.column, p.name) for p in result.problems] == [(2, 3, 5, "trl.SFTTrainer(tokenizer=)")]


def test_notebook_magic_continuation_lines_keep_the_magic_indent(c116):
    """`%pip install \\` followed by indented package lines (a course notebook's install cell) is masked as one
    statement per line at the magic's indent: the cell parses, and the problems of the other cells are found."""
    nb = {"cells": [
        {"cell_type": "code", "source": ["%pip install --quiet \\\n", "    torch \\\n", "    trl==0.4.7\n", "x = 1\n"]},
        {"cell_type": "code", "source": ["from trl import PPOTrainer\n"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    result = check_source("n.ipynb", json.dumps(nb), c116)
    assert result.errors == []
    assert [(p.cell, p.line, p.name) for p in result.problems] == [(1, 1, "trl.PPOTrainer")]


def test_a_one_line_automagic_cell_is_ipython_not_a_syntax_error(c116):
    """SAMANTA1401/llm_finetune's notebooks: a cell holding only `pip install -U transformers ...` (no `%`). IPython's
    automagic runs it (a one-line cell: `InteractiveShell.transform_cell`), so the notebook is checked, not refused."""
    nb = {"cells": [
        {"cell_type": "code", "source": ["pip install -U transformers peft accelerate datasets bitsandbytes\n"]},
        {"cell_type": "code", "source": ["from trl import PPOTrainer\n"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    result = check_source("n.ipynb", json.dumps(nb), c116)
    assert result.errors == [] and result.checked
    assert [(p.cell, p.line, p.name) for p in result.problems] == [(1, 1, "trl.PPOTrainer")]
    # two lines: IPython does not apply automagic there either, the cell is a syntax error and reported
    nb["cells"][0]["source"] = ["x = 1\n", "pip install -U transformers\n"]
    result = check_source("n.ipynb", json.dumps(nb), c116)
    assert result.errors and "cell 0: does not parse" in result.errors[0]


def test_console_script_subcommand_and_pre_commit_hook(tmp_path, capsys):
    import yaml

    from compat.cli import main as trl_compat

    _write(tmp_path, {"t.py": "from trl import SFTTrainer\nSFTTrainer(model='m', tokenizer=1)\n"})
    assert trl_compat(["check", str(tmp_path / "t.py"), "--target-trl", "1.16"]) == 1
    assert "unknown-keyword" in capsys.readouterr().out
    hooks = yaml.safe_load((Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == "trl-compat-check"]
    assert hook["entry"] == "trl-compat check" and hook["language"] == "python"


def test_every_example_of_issue_12_is_flagged_on_1_16(c116):
    """The names and keywords issue 12 lists as rejected by TRL 1.16 (each verified there against the 1.16 wheel)."""
    code = (Path(__file__).parent / "issue12_examples.py.txt").read_text()
    found = {p.name for p in c116.check(code) if p.code != "missing-argument"}
    names = ("ORPOConfig ORPOTrainer CPOTrainer OnlineDPOTrainer GKDTrainer BCOTrainer XPOTrainer NashMDTrainer "
             "PRMTrainer IterativeSFTTrainer DDPOTrainer AlignPropTrainer setup_chat_format "
             "DataCollatorForCompletionOnlyLM get_kbit_device_map DPOScriptArguments TextEnvironment").split()
    expected = {f"trl.{n}" for n in names}
    expected |= {f"trl.trainer.{n}" for n in ("ConstantLengthDataset", "RunningMoments", "FDivergenceConstants")}
    expected |= {f"trl.trainer.utils.{n}" for n in ("prepare_deepspeed", "SIMPLE_CHAT_TEMPLATE",
                                                     "SIMPLE_QUERY_CHAT_TEMPLATE", "cap_exp")}
    expected |= {"trl.commands.cli_utils", "trl.import_utils.is_npu_available", "trl.core"}
    expected |= {f"trl.DPOTrainer({k}=)" for k in ("beta", "tokenizer", "max_length", "max_prompt_length")}
    expected |= {f"trl.SFTTrainer({k}=)" for k in ("dataset_text_field", "max_seq_length", "packing", "tokenizer",
                                                  "model_init_kwargs")}
    expected |= {"trl.RewardTrainer(tokenizer=)", "trl.KTOTrainer(tokenizer=)"}
    expected |= {f"trl.RLOOTrainer({k}=)" for k in ("config", "tokenizer", "policy", "ref_policy", "reward_model")}
    assert found == expected
    # and the same file against the TRL of its era: only what that era lacked
    assert {p.name for p in Checker("0.8.6").check(code)} >= {"trl.GKDTrainer", "trl.RLOOTrainer"}


def test_a_pathological_file_fails_alone(tmp_path, capsys):
    _write(tmp_path, {"deep.py": "import trl\nx = " + "+".join(["a"] * 20000) + "\n",
                      "parens.py": "import trl\nx = " + "(" * 5000 + ")" * 5000 + "\n",
                      "ok.py": "from trl import PPOTrainer\n"})
    assert main([str(tmp_path), "--target-trl", "1.16", "--format", "json"]) == 2
    files = {Path(f["path"]).name: f for f in json.loads(capsys.readouterr().out)["files"]}
    assert files["deep.py"]["errors"] == ["too deeply nested to parse"]
    assert "does not parse" in files["parens.py"]["errors"][0]
    assert files["ok.py"]["problems"][0]["name"] == "trl.PPOTrainer"


def test_compat_imports_are_held_against_what_trl_compat_exports(c116, tmp_path):
    """What migrated code imports from `compat.trl` / `compat.losses` must exist (the names of `compat._exports`,
    read without importing those modules, which check the floors)."""
    assert problems(c116, """\
        from compat.trl import get_kbit_device_map, Nope
        from compat.losses import FusedLinearDPOLoss, FusedLinearBad
        from compat.trl import *
        from .compat.trl import Local
        """) == [(1, "missing-name", "compat.trl.Nope"), (2, "missing-name", "compat.losses.FusedLinearBad")]
    only_compat = tmp_path / "only_compat.py"
    only_compat.write_text("from compat.losses import Nope\n")
    result = check_source(str(only_compat), only_compat.read_text(), c116)
    assert [p.name for p in result.problems] == ["compat.losses.Nope"]
    only_compat.write_text("from compat.trl import Nope\n")  # a file importing only compat.trl is read too
    result = check_source(str(only_compat), only_compat.read_text(), c116)
    assert [p.name for p in result.problems] == ["compat.trl.Nope"]


def test_compat_calls_are_held_against_the_signature_trl_compat_keeps(c116):
    """A `compat.trl` name with TRL candidates keeps a TRL signature where the target has the name (GRPO, Online
    DPO; XPO on 1.13: no `judge=`); where it has none, the reference_impl class it resolves to is read from its source
    (XPO on 1.16: TRL 1.13's plus 1.0's `judge=`); a reference config without its own `__init__` keeps the last TRL
    release's (XPOConfig: 1.13's). The copies of 0.x helpers (no TRL path) are not held against anything."""
    code = """\
        from compat.trl import GRPOTrainer, OnlineDPOTrainer as ODT, XPOConfig, XPOTrainer, setup_chat_format
        XPOTrainer(model, ref, reward_funcs=r, judge=j, nope=2, args=XPOConfig(output_dir="o", alpha=[1e-5], nope=1))
        GRPOTrainer(model=m, reward_funcs=f, processing_class=t, tokenizer=t)
        ODT(m, judge=j)
        setup_chat_format(m, t, whatever=1)
        def f(XPOTrainer):
            XPOTrainer(judge=1)
        x = XPOConfig.some_attribute.deeper  # attributes of compat.trl names are not held (online-rlhf crashed)
        class Sub(XPOTrainer):
            def __init__(self):
                super().__init__(judge=1, nope=1)
        """
    assert problems(c116, code) == [
        (2, "unknown-keyword", "compat.trl.XPOTrainer(nope=)"), (2, "unknown-keyword", "compat.trl.XPOConfig(nope=)"),
        (3, "unknown-keyword", "compat.trl.GRPOTrainer(tokenizer=)"),
        (4, "unknown-keyword", "compat.trl.OnlineDPOTrainer(judge=)"),
        (11, "unknown-keyword", "compat.trl.XPOTrainer(nope=)")]
    [xpo] = [p for p in Checker("1.16").check(textwrap.dedent(code)) if p.line == 2 and "XPOTrainer" in p.name]
    assert "reference_impl's signature" in xpo.message and "reference_impl.trainers.xpo.XPOTrainer" in xpo.message
    on_113 = [(p.line, p.name) for p in Checker("1.13").check(textwrap.dedent(code)) if "XPO" in p.name]
    assert on_113 == [(2, "compat.trl.XPOTrainer(judge=)"), (2, "compat.trl.XPOTrainer(nope=)"),
                      (2, "compat.trl.XPOConfig(nope=)"), (11, "compat.trl.XPOTrainer(judge=)"),
                      (11, "compat.trl.XPOTrainer(nope=)")]
    [xpo] = [p for p in Checker("1.13").check(textwrap.dedent(code)) if p.line == 2 and "judge" in p.name]
    assert "TRL 1.13.0's signature" in xpo.message and "trl.experimental.xpo.XPOTrainer" in xpo.message


def test_compat_diffusion_calls_keep_trl_0_23_1s_signatures(c116):
    """The diffusion trainers left TRL in 0.24: their `compat.trl` calls are held against 0.23.1, the signatures the
    reference (`reference_impl.diffusion`) keeps; the example scripts' calls pass."""
    assert problems(c116, """\
        from compat.trl import DDPOConfig, DDPOTrainer, DefaultDDPOStableDiffusionPipeline, aesthetic_scorer
        pipe = DefaultDDPOStableDiffusionPipeline("sd", pretrained_model_revision="main", use_lora=True)
        DDPOTrainer(DDPOConfig(sample_num_steps=2), aesthetic_scorer("id", "f"), prompt_fn, pipe, image_samples_hook=h)
        DDPOTrainer(DDPOConfig(output_dir="o"), r, p, pipe, h, 1)
        DefaultDDPOStableDiffusionPipeline("sd", "main")
        """) == [(4, "too-many-positional", "compat.trl.DDPOTrainer"),
                 (4, "unknown-keyword", "compat.trl.DDPOConfig(output_dir=)"),
                 (5, "too-many-positional", "compat.trl.DefaultDDPOStableDiffusionPipeline")]


def test_the_reference_signature_is_read_from_the_reference_source():
    """`compat.check.reference` reads the real `__init__` of the reference class (here against the class itself,
    imported): every parameter with its kind; a class without its own `__init__` (the configs) gives None."""
    import inspect

    import reference_impl
    from compat.check.reference import reference_signature

    kinds = {inspect.Parameter.POSITIONAL_OR_KEYWORD: "pk", inspect.Parameter.KEYWORD_ONLY: "ko"}
    for name in ("XPOTrainer", "NashMDTrainer", "BCOTrainer", "PRMTrainer"):
        sig = reference_signature(name)
        real = inspect.signature(getattr(reference_impl, name).__init__).parameters.values()
        assert [(p.name, p.kind) for p in sig.params] == [(p.name, kinds[p.kind]) for p in real if p.name != "self"]
    assert reference_signature("XPOTrainer").param("judge").kind == "ko"
    assert reference_signature("XPOConfig") is None and reference_signature("NashMDConfig") is None
    assert reference_signature("setup_chat_format") is None


def test_the_export_table_is_what_the_modules_resolve():
    import compat.losses
    import compat.trl
    from compat._exports import EXPORTS

    assert EXPORTS["compat.trl"] == set(compat.trl.TABLE.names())
    assert EXPORTS["compat.losses"] == set(compat.losses.TABLE.names())


def test_a_py_exported_from_a_notebook_is_checked_with_its_ipython_lines_masked(tmp_path, capsys):
    """Colab's "Download .py" keeps `!pip install ...`: the file is checked as a notebook cell would be."""
    _write(tmp_path, {"export.py": "!pip install -q trl==0.4.7\n%cd /content\nfrom trl import PPOTrainer\n",
                      "broken.py": "import trl\n!pip install trl\ndef f(:\n"})
    main([str(tmp_path), "--target-trl", "1.16", "--format", "json"])
    files = {Path(f["path"]).name: f for f in json.loads(capsys.readouterr().out)["files"]}
    assert not files["export.py"]["errors"]
    assert [(p["name"], p["line"]) for p in files["export.py"]["problems"]] == [("trl.PPOTrainer", 3)]
    assert "does not parse" in files["broken.py"]["errors"][0]


def test_removed_script_dataclass_fields_on_parsed_instances(c116):
    # TRL's own examples/scripts/prm.py of 0.19: fails at run time on 1.16 with AttributeError on these reads
    code = """\
        from transformers import HfArgumentParser
        from trl import ModelConfig, ScriptArguments, SFTConfig

        parser = HfArgumentParser((ScriptArguments, SFTConfig, ModelConfig))
        script_args, training_args, model_config = parser.parse_args_into_dataclasses()
        dtype = model_config.torch_dtype
        trust = model_config.trust_remote_code
        fine = model_config.dtype, training_args.trust_remote_code
        other = load().torch_dtype
        """
    found = [p for p in c116.check(textwrap.dedent(code)) if p.code == "missing-field"]
    assert [(p.line, p.column, p.name, p.since) for p in found] == [
        (6, 9, "trl.ModelConfig.torch_dtype", "0.27.0"), (7, 9, "trl.ModelConfig.trust_remote_code", "1.7.0")]
    assert "use dtype" in found[0].message and "SFTConfig.trust_remote_code" in found[1].message
    # the release the code was written for has both fields; a local ModelConfig is not TRL's
    assert not [p for p in Checker("0.26.2").check(textwrap.dedent(code)) if p.code == "missing-field"]
    assert not [p for p in c116.check(textwrap.dedent("""\
        from trl import SFTConfig, TrlParser
        class ModelConfig: torch_dtype = None
        a, m = TrlParser((SFTConfig, ModelConfig)).parse_args_and_config()
        print(m.torch_dtype)
        """)) if p.code == "missing-field"]


def test_removed_training_config_fields_on_parsed_and_annotated_instances(c116):
    """aligning-to-what's train/rloo.py (a TRL 0.9 RLOO script feeding the project's own RLOO v1 trainer) read
    `config.sft_model_path` from `TrlParser((RLOOConfig, ModelConfig))`: an AttributeError on 1.16 that the check
    did not see. TRL's own fields only; TrainingArguments' fields, properties and methods are not judged here."""
    code = """\
        from transformers import HfArgumentParser
        from trl import DPOConfig, ModelConfig, RLOOConfig, SFTConfig, TrlParser

        config, model_config = TrlParser((RLOOConfig, ModelConfig)).parse_args_into_dataclasses()
        policy = load(config.sft_model_path)
        k = config.rloo_k
        fine = config.num_generations, config.output_dir, config.world_size, config.to_dict()
        sft = SFTConfig(output_dir="out")
        n = sft.max_seq_length
        sft.max_length = n

        def train(args: DPOConfig, other):
            return args.max_target_length, args.beta, other.max_target_length
        """
    found = [p for p in c116.check(textwrap.dedent(code)) if p.code == "missing-field"]
    assert [(p.line, p.column, p.name) for p in found] == [
        (5, 15, "trl.RLOOConfig.sft_model_path"), (6, 5, "trl.RLOOConfig.rloo_k"),
        (9, 5, "trl.SFTConfig.max_seq_length"), (13, 12, "trl.DPOConfig.max_target_length")]
    assert found[1].since == "0.25.0" and "RLOOConfig in TRL 1.16.0 has no field `rloo_k`" in found[1].message
    # the release the code was written for has every one of them
    assert not [p for p in Checker("0.11.4").check(textwrap.dedent(code)) if p.code == "missing-field"]


def test_training_config_reads_not_followed(c116):
    """A local class of the same name, a project subclass (it may declare the field), a rebound name, an attribute
    of something else: left alone."""
    code = """\
        from dataclasses import dataclass
        from trl import DPOConfig, TrlParser

        @dataclass
        class MyConfig(DPOConfig):
            max_target_length: int = 128

        mine, = TrlParser((MyConfig,)).parse_args_into_dataclasses()
        a = mine.max_target_length
        args = DPOConfig(output_dir="o")
        args = load()
        b = args.max_target_length
        c = trainer.args.max_target_length
        """
    assert not [p for p in c116.check(textwrap.dedent(code)) if p.code == "missing-field"]
    local = """\
        class RLOOConfig:
            sft_model_path = "x"
        config = RLOOConfig()
        print(config.sft_model_path)
        """
    assert not [p for p in c116.check(textwrap.dedent(local)) if p.code == "missing-field"]


def test_training_config_classes_are_trls_own():
    """The classes come from the atlas: TRL's configs under every path they were exported, not peft's
    MultitaskPromptTuningConfig that 0.8 re-exported, and not the PPO configs (ppo-to-grpo follows their reads)."""
    from migrations.kinds.config_reads import config_classes, removed_config_fields

    classes = config_classes()
    assert classes["trl.trainer.dpo_config.DPOConfig"] == "DPOConfig" and classes["trl.RLOOConfig"] == "RLOOConfig"
    assert "trl.MultitaskPromptTuningConfig" not in classes
    assert not any(n in ("PPOConfig", "PPOv2Config", "ModelConfig") for n in classes.values())
    gone = removed_config_fields("trl.SFTConfig", "1.16.0")
    assert gone["max_seq_length"].last == "0.19.1" and "output_dir" not in gone and "max_length" not in gone
    assert "max_seq_length" not in removed_config_fields("trl.SFTConfig", "0.19.1")
    # 0.11's OnPolicyConfig declared world_size; on 1.16 TrainingArguments answers it as a property
    assert "world_size" not in removed_config_fields("trl.RLOOConfig", "1.16.0")


def test_a_file_importing_the_repositorys_own_trl_copy_is_not_held_against_trl(tmp_path, capsys):
    """A `trl/` package beside a script, or on a folder the script puts on `sys.path`, is what `from trl import ...`
    imports there (a vendored TRL 0.4 in a real PPO-era repository, szalouk/rlhf-bias): the migrator leaves the file
    alone, and the check does not hold its TRL names against the target; its transformers names still are."""
    _write(tmp_path, {
        "trl/__init__.py": "from .trainer import PPOConfig\n",
        "rl.py": "from trl import PPOConfig\nfrom transformers import load_tool\n",
        "notebooks/uses_vendor.py": "import sys\nsys.path.insert(0, '../vendor')\nfrom trl import PPOConfig\n",
        "vendor/trl/__init__.py": "PPOConfig = object\n",
        "elsewhere/real.py": "from trl import PPOConfig\n",
    })
    assert main([str(tmp_path), "--target-trl", "1.16", "--format", "json"]) == 1
    files = {Path(f["path"]).relative_to(tmp_path).as_posix(): f for f in json.loads(capsys.readouterr().out)["files"]}
    assert files["rl.py"]["own_trl"] == "`trl` here is the repository's own copy (trl/__init__.py)"
    assert [p["name"] for p in files["rl.py"]["problems"]] == ["transformers.load_tool"]
    assert "puts ../vendor on sys.path" in files["notebooks/uses_vendor.py"]["own_trl"]
    assert files["notebooks/uses_vendor.py"]["problems"] == []
    assert files["elsewhere/real.py"]["own_trl"] is None
    assert [p["name"] for p in files["elsewhere/real.py"]["problems"]] == ["trl.PPOConfig"]
