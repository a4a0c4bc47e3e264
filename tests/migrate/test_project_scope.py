"""What a run touches in a tree that does not use TRL, or whose `trl` is the repository's own copy (the corpus'
negative controls: trlx-style trees with transformers/accelerate configs, a vendored TRL 0.x beside its scripts)."""

from __future__ import annotations

from pathlib import Path

from compat.migrate.cli import main
from compat.migrate.runner import vendored_trl
from compat.migrate.target import project_uses_trl, project_uses_trl_vllm

FSDP_YAML = "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_backward_prefetch_policy: BACKWARD_PRE\n"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_a_tree_without_trl_is_left_alone(tmp_path: Path, capsys) -> None:
    files = {
        "train.py": "from transformers import TrainingArguments\nTrainingArguments('o', evaluation_strategy='no')\n",
        "configs/fsdp.yaml": FSDP_YAML,
        "requirements.txt": "transformers==4.31.0\naccelerate==0.21.0\n",
        "notes.md": "we tried `from trl import PPOTrainer` once\n",
    }
    root = _tree(tmp_path / "trlx_like", files)
    assert not project_uses_trl([str(root)])
    assert main(["--check", "--allow-dirty", str(root)]) == 0
    assert "nothing here imports or requires trl" in capsys.readouterr().err
    assert main(["--check", "--allow-dirty", "--target-transformers", "4", str(root)]) == 1  # named: it runs
    assert all((root / n).read_text(encoding="utf-8") == t for n, t in files.items())


def test_one_trl_import_or_trl_requirement_makes_it_a_trl_project(tmp_path: Path) -> None:
    root = _tree(tmp_path / "a", {"x.py": "import os\n", "sub/train.py": "import os\nfrom trl import SFTTrainer\n"})
    assert project_uses_trl([str(root)])
    root = _tree(tmp_path / "b", {"x.py": "import os\n", "requirements.txt": "trl==0.8.6\n"})
    assert project_uses_trl([str(root)])
    root = _tree(tmp_path / "c", {"nb.ipynb": '{"cells": [{"source": ["from trl import DPOTrainer"]}]}'})
    assert project_uses_trl([str(root)])


def test_scripts_beside_a_vendored_trl_copy_are_left_alone(tmp_path: Path, capsys) -> None:
    files = {
        "RLHF/trl/__init__.py": "",
        "RLHF/trl/ppo.py": "class PPOTrainer:\n    pass\n",
        "RLHF/ppo_example.py": "from trl.ppo import PPOTrainer\ntrainer = PPOTrainer()\n",
    }
    root = _tree(tmp_path / "vendored", files)
    assert not project_uses_trl([str(root)])
    assert main(["--allow-dirty", "--allow-no-vcs", str(root)]) == 0
    assert all((root / n).read_text(encoding="utf-8") == t for n, t in files.items())


def test_a_module_named_trl_inside_a_package_is_migrated(tmp_path: Path) -> None:
    """`pkg/trainers/trl.py` doing `from trl import X` wraps the installed TRL (imported as a package module
    its absolute import is the installed TRL; run as a script it would import itself): it is not a vendored copy.
    Its siblings still see `trl.py` beside them when run as scripts, and stay left alone."""
    files = {
        "pkg/__init__.py": "",
        "pkg/trainers/__init__.py": "",
        "pkg/trainers/trl.py": "from trl import SFTConfig\n\nargs = SFTConfig(output_dir='o', max_seq_length=512)\n",
        "pkg/trainers/other.py": "from trl import SFTTrainer\n",
    }
    root = _tree(tmp_path / "pkg_trl", files)
    assert vendored_trl(str(root / "pkg/trainers/trl.py")) is None
    assert vendored_trl(str(root / "pkg/trainers/other.py")) == str(root / "pkg/trainers/trl.py")
    assert project_uses_trl([str(root)])
    assert main(["--allow-dirty", "--allow-no-vcs", str(root)]) == 0
    assert "max_length=512" in (root / "pkg/trainers/trl.py").read_text(encoding="utf-8")
    assert (root / "pkg/trainers/other.py").read_text(encoding="utf-8") == files["pkg/trainers/other.py"]


def test_an_unused_gone_import_is_kept_where_another_module_takes_it(tmp_path: Path) -> None:
    """An import of a gone name nothing in its module uses is dropped (ruff's F401 fix), unless another file of the
    run imports that name from a module that may be the project's, or `*` from a module of that file's name."""
    gone = "from trl.trainer.utils import flush_right\nimport os\n"
    root = _tree(tmp_path / "r", {"helpers.py": gone, "alone.py": gone, "star.py": gone,
                                  "train.py": "from helpers import flush_right\nfrom star import *\nimport trl\n"})
    assert main(["--allow-dirty", "--allow-no-vcs", "--target-trl", "1.16.0", str(root)]) == 0
    assert (root / "alone.py").read_text(encoding="utf-8") == "import os\n"
    for kept in ("helpers.py", "star.py"):
        text = (root / kept).read_text(encoding="utf-8")
        assert "from trl.trainer.utils import flush_right" in text and "TODO(trl-compat)" in text, kept


def test_project_imports_reads_every_from_import_form() -> None:
    from compat.migrate.runner import project_imports

    data = (b"from utils import a, b as c\nfrom .pkg.mod import (\n    d,\n    e,\n)\nfrom tools import *\n"
            b"from trl import PPOTrainer\nfrom transformers.utils import x\nfrom . import f  # note\n")
    assert project_imports(data) == {"utils:a", "utils:b", "utils:c", "mod:d", "mod:e", "tools:*", ":f"}


def test_a_trl_folder_of_copied_trl_modules_is_left_alone(tmp_path: Path) -> None:
    """A course's annotated copy of TRL's modules in a `trl/` folder without `__init__.py` (`from .import_utils ...`
    inside) is TRL's code, not the project's: never rewritten. A `trl/` folder of the project's own scripts is."""
    copy = "from transformers import top_k_top_p_filtering\n\nfrom .import_utils import is_npu_available\n"
    script = "from transformers import top_k_top_p_filtering\nimport trl\n\ntop_k_top_p_filtering(x)\n"
    root = _tree(tmp_path / "r", {"notes/trl/core_original.py": copy, "notes/trl/trainer/ppo_trainer.py": copy,
                                  "runs/trl/run.py": script, "train.py": "import trl\n"})
    assert main(["--allow-dirty", "--allow-no-vcs", "--target-trl", "1.16.0", str(root)]) == 0
    assert (root / "notes/trl/core_original.py").read_text(encoding="utf-8") == copy
    assert (root / "notes/trl/trainer/ppo_trainer.py").read_text(encoding="utf-8") == copy
    assert "TODO(trl-compat)" in (root / "runs/trl/run.py").read_text(encoding="utf-8")


def test_modules_of_a_package_see_the_copy_of_trl_above_it(tmp_path: Path) -> None:
    """ErxinYu/PopALM: the root scripts import `chatGLM_local.modeling_chatglm` (a namespace package: no
    `__init__.py`, relative imports), whose `from trl.core import print_trainable_parameters` is the repository's
    edited `trl/` beside those scripts. A module of a regular package (it may be installed and imported from
    anywhere) and a script in a plain folder (run as `python scripts/run.py`, `sys.path[0]` is `scripts/`) are
    migrated."""
    files = {
        "trl/__init__.py": "__version__ = '0.4.2.dev0'\n",
        "trl/core.py": "def print_trainable_parameters(model):\n    pass\n",
        "chatglm_ppo.py": "from chatGLM_local.modeling_chatglm import Model\nfrom trl import PPOTrainer\n",
        "chatGLM_local/modeling_chatglm.py": ("from transformers.tokenization_utils import PreTrainedTokenizer\n"
                                              "from trl.core import print_trainable_parameters\n"
                                              "from .configuration_chatglm import Config\n"),
        "chatGLM_local/configuration_chatglm.py": "class Config:\n    pass\n",
        "pkg/__init__.py": "",
        "pkg/deep/__init__.py": "",
        "pkg/deep/mod.py": "from trl.core import print_trainable_parameters\n",
        "scripts/run.py": "from trl.core import respond_to_batch\n",
    }
    root = _tree(tmp_path / "popalm", files)
    module = root / "chatGLM_local/modeling_chatglm.py"
    assert vendored_trl(str(module), files["chatGLM_local/modeling_chatglm.py"]) == str(root / "trl/__init__.py")
    assert vendored_trl(str(module)) is None  # without its source: not known to be a package module
    assert vendored_trl(str(root / "pkg/deep/mod.py"), files["pkg/deep/mod.py"]) is None
    assert vendored_trl(str(root / "scripts/run.py"), files["scripts/run.py"]) is None
    assert project_uses_trl([str(root)])  # scripts/run.py imports the installed TRL
    assert main(["--allow-dirty", "--allow-no-vcs", str(root)]) == 0
    for name in ("chatGLM_local/modeling_chatglm.py", "chatglm_ppo.py"):
        assert (root / name).read_text(encoding="utf-8") == files[name], name
    assert (root / "scripts/run.py").read_text(encoding="utf-8") != files["scripts/run.py"]


def test_a_vllm_pin_is_raised_only_where_the_project_uses_trls_vllm(tmp_path: Path) -> None:
    """TRL declares vLLM under its `vllm` extra only: a project that runs `vllm.LLM` itself for inference (and TRL for
    SFT) keeps its pin, with the torch pin vLLM itself needs; one that trains with `use_vllm=True` gets TRL's window."""
    own = {
        "requirements.txt": "trl==0.19.1\nvllm==0.8.5\ntorch==2.6.0\n",
        "sft.py": "from trl import SFTConfig\nSFTConfig(output_dir='o')\n",
        "infer.py": "from vllm import LLM\nLLM('m')\n",
    }
    root = _tree(tmp_path / "own", own)
    assert not project_uses_trl_vllm([str(root)])
    assert main(["--allow-dirty", "--allow-no-vcs", str(root)]) in (0, 1)
    lines = (root / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert "vllm==0.8.5" in lines and not any(x.startswith("trl==0.19") for x in lines)

    trained = {**own, "grpo.py": "from trl import GRPOConfig\nGRPOConfig(output_dir='o', use_vllm=True)\n"}
    root = _tree(tmp_path / "trained", trained)
    assert project_uses_trl_vllm([str(root)])
    assert main(["--allow-dirty", "--allow-no-vcs", str(root)]) in (0, 1)
    lines = (root / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert "vllm==0.8.5" not in lines and any(x.startswith("vllm>=") for x in lines)
    extra = _tree(tmp_path / "extra", {**own, "requirements.txt": "trl[vllm]==0.19.1\nvllm==0.8.5\n"})
    assert project_uses_trl_vllm([str(extra)])


def test_a_script_below_a_copy_of_trl_that_defines_its_names_is_left_alone(tmp_path: Path) -> None:
    """alkaid72/RLHF-on-Sentence-Generating: TRL 0.1's code copied to the repository's root `trl/`, and
    `test/inference_ppo_gpt.py` imports `trl.gpt2.GPT2HeadWithValueModel`, which that copy defines: run from the root
    (or with it on PYTHONPATH) the file imports the copy, so it is not the migrator's to rewrite and `check` does not
    hold it against the installed TRL. A script below the same copy importing a name the copy lacks can only mean the
    installed TRL: migrated. Above the repository's root (`.git`) nothing counts."""
    import subprocess

    from compat.check.cli import main as check_main
    from compat.migrate.resolution import vendored_above

    inference = "from trl.gpt2 import GPT2HeadWithValueModel\n\nmodel = GPT2HeadWithValueModel.from_pretrained(p)\n"
    installed = "from trl import PPOConfig, PPOTrainer\nfrom trl.gpt2 import GPT2HeadWithValueModel\n"
    files = {
        "trl/__init__.py": "__version__ = '0.1.1'\n",
        "trl/gpt2.py": "from transformers import GPT2Model\n\n\nclass GPT2HeadWithValueModel(GPT2Model):\n    pass\n",
        "trl/ppo.py": "class PPOTrainer:\n    pass\n",
        "test/inference_ppo_gpt.py": inference,
        "test/train.py": installed,
    }
    root = _tree(tmp_path / "repo", files)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    finding = vendored_above(str(root / "test/inference_ppo_gpt.py"), inference)
    assert finding is not None and "../trl above this file" in finding.message
    assert "trl.gpt2.GPT2HeadWithValueModel" in finding.message
    assert vendored_above(str(root / "test/train.py"), installed) is None  # PPOConfig: not in the copy's __init__
    assert main(["--allow-dirty", "--target-trl", "1.16.0", str(root)]) == 0
    assert (root / "test/inference_ppo_gpt.py").read_text(encoding="utf-8") == inference
    assert (root / "test/train.py").read_text(encoding="utf-8") != installed
    assert check_main(["--target-trl", "1.16.0", str(root / "test/inference_ppo_gpt.py")]) == 0

    # the same tree without a repository root: the search has no bound, so it does not look up at all
    bare = _tree(tmp_path / "bare", files)
    assert vendored_above(str(bare / "test/inference_ppo_gpt.py"), inference) is None
