"""`migrations.kinds.imports`: resolving TRL names and the one way rules edit imports."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from migrations.kinds.imports import (
    TrlRef,
    drop_unused_import,
    ensure_imports,
    imported_names,
    imports_trl,
    insert_after_imports,
    split_qualified,
    star_imports,
    trl_refs,
)


def test_split_qualified() -> None:
    assert split_qualified("trl.trainer.ppo_config.PPOConfig") == TrlRef("trl.trainer.ppo_config", "PPOConfig")
    assert split_qualified(".trl.PPOConfig") is None
    assert split_qualified("trlx.PPOConfig") is None


def test_ensure_imports_merges_and_skips_present() -> None:
    mod = cst.parse_module('"""doc"""\nfrom __future__ import annotations\nimport os\nfrom transformers import A\n\nx = 1\n')
    out = ensure_imports(mod, [("transformers", "B"), ("os", ""), ("peft", "get_peft_model"), ("transformers", "A")])
    assert out.code == (
        '"""doc"""\nfrom __future__ import annotations\nimport os\nfrom transformers import A, B\n'
        "from peft import get_peft_model\n\nx = 1\n"
    )


def test_imports_trl_gate() -> None:
    assert imports_trl(cst.parse_module("from trl import PPOTrainer\n"), {"PPOTrainer"})
    assert imports_trl(cst.parse_module("import trl.core\n"), set())
    assert imports_trl(cst.parse_module("from trl import *\n"), set())
    assert not imports_trl(cst.parse_module("from trl import GRPOTrainer\nPPOTrainer = 1\n"), {"PPOTrainer"})
    assert not imports_trl(cst.parse_module("from .trl import PPOTrainer\n"), {"PPOTrainer"})



def test_ensure_imports_adds_module_imports_once_with_a_blank_line_before_the_code():
    mod = cst.parse_module("import trl\nx = trl.A()\n")
    out = ensure_imports(mod, [("compat.trl", ""), ("compat.trl", "")])
    assert out.code == "import trl\nimport compat.trl\n\nx = trl.A()\n"
    assert ensure_imports(out, [("compat.trl", "")]).code == out.code  # already there: unchanged


def test_ensure_imports_never_merges_into_an_import_below_a_use():
    # a notebook: the config cell comes before the cell that imports the trainer (NameError if merged there)
    mod = cst.parse_module("import os\ncfg = SFTConfig(output_dir=os.sep)\nfrom trl import SFTTrainer\nSFTTrainer(args=cfg)\n")
    out = ensure_imports(mod, [("trl", "SFTConfig")])
    assert out.code == ("import os\nfrom trl import SFTConfig\n\ncfg = SFTConfig(output_dir=os.sep)\n"
                        "from trl import SFTTrainer\nSFTTrainer(args=cfg)\n")
    # used only after the late import: merged there as before; two names split between the places
    late = cst.parse_module("import os\nx = 1\nfrom trl import SFTTrainer\nSFTTrainer(args=SFTConfig(), c=DPOConfig)\n")
    assert ensure_imports(late, [("trl", "SFTConfig")]).code == (
        "import os\nx = 1\nfrom trl import SFTTrainer, SFTConfig\nSFTTrainer(args=SFTConfig(), c=DPOConfig)\n")
    mixed = cst.parse_module("import os\ny = DPOConfig\nfrom trl import SFTTrainer\nSFTTrainer(args=SFTConfig())\n")
    assert ensure_imports(mixed, [("trl", "SFTConfig"), ("trl", "DPOConfig")]).code == (
        "import os\nfrom trl import DPOConfig\n\ny = DPOConfig\nfrom trl import SFTTrainer, SFTConfig\n"
        "SFTTrainer(args=SFTConfig())\n")


def test_ensure_imports_does_not_count_an_import_below_the_first_use():
    """dieai/generative-ai-on-aws's PPO notebook: the model cell (a rule's `AutoModelForCausalLM` there) comes before
    a later cell's `from transformers import ..., AutoModelForCausalLM`: that import does not serve the use (a
    NameError when the cells run in order), so the name is imported above it too."""
    mod = cst.parse_module("import os\nm = AutoModelForCausalLM.from_pretrained(os.sep)\n"
                           "from transformers import AutoModelForCausalLM\nn = AutoModelForCausalLM\n")
    out = ensure_imports(mod, [("transformers", "AutoModelForCausalLM")])
    assert out.code.startswith("import os\nfrom transformers import AutoModelForCausalLM\n\nm = ")
    above = cst.parse_module("from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM\n")
    assert ensure_imports(above, [("transformers", "AutoModelForCausalLM")]) is above


def test_drop_unused_import():
    mod = cst.parse_module("from compat.trl import dft_loss, other\nother()\n")
    assert drop_unused_import(mod, "compat.trl", "dft_loss").code == "from compat.trl import other\nother()\n"
    used = cst.parse_module("from compat.trl import dft_loss\nf(dft_loss)\n")
    assert drop_unused_import(used, "compat.trl", "dft_loss").code == used.code
    alone = cst.parse_module("import os\nfrom compat.trl import dft_loss\n")
    assert drop_unused_import(alone, "compat.trl", "dft_loss").code == "import os\n"


def test_insert_after_imports_and_star_imports():
    mod = cst.parse_module('"""doc"""\nimport os\nx = 1\n')
    out = insert_after_imports(mod, [cst.parse_statement("def f():\n    pass\n")])
    assert out.code == '"""doc"""\nimport os\ndef f():\n    pass\n\n\nx = 1\n'
    assert star_imports(cst.parse_module("from trl import *\nfrom os import *\nfrom trl.core import *\n")) == [
        "trl", "trl.core"]


class _Names(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, tuple[set[str], list[TrlRef]]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        self.found[cst.Module([]).code_for_node(node.func)] = (imported_names(self, node.func), trl_refs(self, node.func))


def test_imported_names_follow_imports_not_spellings():
    src = (
        "import trl as t\nfrom trl.trainer import PPOTrainer as P\n"
        "class Local:\n    pass\n"
        "t.GRPOTrainer()\nP()\nLocal()\nprint()\n"
    )
    v = _Names()
    cst.MetadataWrapper(cst.parse_module(src)).visit(v)
    assert v.found["t.GRPOTrainer"] == ({"trl.GRPOTrainer"}, [TrlRef("trl", "GRPOTrainer")])
    assert v.found["P"] == ({"trl.trainer.PPOTrainer"}, [TrlRef("trl.trainer", "PPOTrainer")])
    assert v.found["Local"] == (set(), []) and v.found["print"] == (set(), [])


def test_split_import_from_renames_moves_and_drops():
    from migrations.kinds.imports import split_import_from

    node = cst.parse_statement("from trl import (A, B as BB, C, D, E as New)\n").body[0]  # type: ignore[attr-defined]
    table = {"A": ("trl", "A2"), "B": ("transformers", "B2"), "C": (None, "C"), "E": ("trl", "New")}
    out = split_import_from(node, lambda module, name: table.get(name))
    assert out is not None
    assert [cst.Module([]).code_for_node(s) for s in out] == [
        "from trl import (A2, D, New)", "from transformers import B2 as BB"]  # its parentheses kept
    assert split_import_from(node, lambda module, name: None) is None
    assert split_import_from(cst.parse_statement("from .trl import A\n").body[0], lambda m, n: ("x", "y")) is None  # type: ignore[attr-defined]


def test_with_kept_aliases_keeps_the_layout():
    from migrations.kinds.imports import with_kept_aliases

    def keep(src: str, names: set[str]) -> str:
        node = cst.parse_statement(src).body[0]  # type: ignore[attr-defined]
        return cst.Module([]).code_for_node(with_kept_aliases(node, [a for a in node.names if a.name.value in names]))

    assert keep("from m import (\n    a,\n    b,\n    c,\n)\n", {"a", "b"}) == "from m import (\n    a,\n    b,\n)"
    assert keep("from m import (a,\n    b, c)\n", {"a", "b"}) == "from m import (a,\n    b)"
    assert keep("from m import (\n    a,\n    b,\n)\n", {"b"}) == "from m import b"
    assert keep("from m import a, b, c\n", {"a", "c"}) == "from m import a, c"


def test_new_imports_go_after_an_unsloth_import_below_the_leading_block():
    """0PeterAdel/CyberBrain_Model (a Colab export): `import torch`, code, `from unsloth import FastLanguageModel`,
    then the trainer cell. Unsloth patches trl/transformers only when imported first: a new `from trl import
    SFTConfig` goes right after it, since the name is used only below it."""
    import libcst as cst

    from migrations.kinds.imports import ensure_imports

    src = ("import torch\nprint(torch.cuda.is_available())\n\nfrom unsloth import FastLanguageModel\n"
           "model = FastLanguageModel.from_pretrained('x')\n\nargs = SFTConfig(output_dir='o')\n")
    out = ensure_imports(cst.parse_module(src), [("trl", "SFTConfig")]).code
    assert out == src.replace("from unsloth import FastLanguageModel\n",
                              "from unsloth import FastLanguageModel\nfrom trl import SFTConfig\n\n")
    used_before = src.replace("print(torch.cuda.is_available())", "SFTConfig")
    out = ensure_imports(cst.parse_module(used_before), [("trl", "SFTConfig")]).code
    assert out.startswith("import torch\nfrom trl import SFTConfig\n")  # used above unsloth: the old place
