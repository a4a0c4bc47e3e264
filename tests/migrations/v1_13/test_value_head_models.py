"""`value-head-models`: before/after and no-op cases (the PPO case files in `ppo_cases/` cover the rest, run with
the other PPO rules by `test_ppo_to_grpo.py`)."""

from __future__ import annotations

import textwrap

import pytest

from migrations.v1_13.value_head_models import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_causal_value_head_model_becomes_the_transformers_class():
    check(RULE, """\
        from trl import AutoModelForCausalLMWithValueHead

        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
    """, """\
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained("gpt2")
    """)


def test_module_access_and_value_head_kwargs_dropped():
    findings = check(RULE, """\
        import trl

        model = trl.AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", v_head_init_strategy="normal")
    """, """\
        import trl
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained("gpt2")
    """)
    assert any(f.changed and "v_head_init_strategy" in f.message for f in findings)


def test_noops():
    noop(RULE, "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained('gpt2')\n")
    noop(RULE, "class AutoModelForCausalLMWithValueHead:\n    pass\n\n\nm = AutoModelForCausalLMWithValueHead()\n")
    noop(RULE, "from trl import AutoModelForCausalLMWithValueHead\n", target="1.12.0")


# A reward-modelling script in the shape the issue saw (value head built, loaded with v_head weights, values read):
# the value head is never dropped.
REWARD_MODELLING = """\
    import torch
    from trl import AutoModelForCausalLMWithValueHead

    model = AutoModelForCausalLMWithValueHead.from_pretrained(MODEL_DIR)
    model.load_state_dict(vhead_params, strict=False)
    model.eval()
    with torch.no_grad():
        _, _, values = model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids))
    inner = model.pretrained_model
    head = model.v_head
    if isinstance(model, AutoModelForCausalLMWithValueHead):
        saved = True
"""


def test_value_head_read_by_the_code_is_kept_through_compat():
    out, findings = run(RULE, REWARD_MODELLING)
    assert out == textwrap.dedent(REWARD_MODELLING).replace("from trl import", "from compat.value_head import")
    assert any(f.changed and "value head kept" in f.message for f in findings)
    assert not [f for f in findings if f.severity == "manual"]


def test_migrated_reward_modelling_still_computes_values(tmp_path):
    """Runs the migrated code on a tiny model; the values equal the written-out formula in float64."""
    import torch

    from compat.tiny import tiny_model

    base = tiny_model(seed=3)
    base.save_pretrained(tmp_path)
    out, _ = run(RULE, REWARD_MODELLING)
    hidden = base.config.hidden_size
    gen = torch.Generator().manual_seed(0)
    weight, bias = torch.randn(1, hidden, generator=gen), torch.randn(1, generator=gen)
    input_ids = torch.randint(0, base.config.vocab_size, (2, 5), generator=gen)
    scope = {"MODEL_DIR": str(tmp_path), "input_ids": input_ids,
             "vhead_params": {"v_head.summary.weight": weight, "v_head.summary.bias": bias}}
    exec(compile(out, "migrated.py", "exec"), scope)  # noqa: S102 - the migrated code under test

    with torch.no_grad():  # oracle: last hidden state of the plain model, times the head, in float64
        base.eval()
        last = base(input_ids=input_ids, output_hidden_states=True).hidden_states[-1].double()
    expected = last @ weight.double().T + bias.double()
    assert scope["values"].shape == (2, 5)
    torch.testing.assert_close(scope["values"].double(), expected.squeeze(-1), rtol=1e-5, atol=1e-5)
    assert scope["head"].summary.weight.data_ptr() == scope["model"].v_head.summary.weight.data_ptr()
    assert scope["inner"].config.hidden_size == hidden and scope["saved"] is True
    state = scope["model"].state_dict()
    assert torch.equal(state["v_head.summary.weight"], weight) and any(k.startswith("model.") for k in state)


def test_kept_wrapper_checkpoint_round_trip(tmp_path):
    """save_pretrained writes the head next to the model; from_pretrained(dir) loads it back."""
    import torch

    from compat.tiny import tiny_model
    from compat.value_head import AutoModelForCausalLMWithValueHead

    wrapped = AutoModelForCausalLMWithValueHead.from_pretrained(tiny_model(seed=1), v_head_init_strategy="normal")
    wrapped.save_pretrained(tmp_path)
    again = AutoModelForCausalLMWithValueHead.from_pretrained(str(tmp_path))
    assert torch.equal(again.v_head.summary.weight, wrapped.v_head.summary.weight)
    assert torch.count_nonzero(wrapped.v_head.summary.bias) == 0


def test_type_checks_never_name_the_factory():
    out, findings = run(RULE, """\
        from trl import AutoModelForCausalLMWithValueHead


        def save(m: AutoModelForCausalLMWithValueHead) -> None:
            if isinstance(m, AutoModelForCausalLMWithValueHead):
                m.save_pretrained("out")


        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
    """)
    assert "isinstance(m, PreTrainedModel)" in out and "def save(m: PreTrainedModel)" in out
    assert "isinstance(m, AutoModelForCausalLM)" not in out
    assert "from transformers import AutoModelForCausalLM, PreTrainedModel" in out
    marks = [f for f in findings if f.severity == "manual" and "type check" in f.message]
    assert [f.line for f in marks] == [5]  # the isinstance check; the annotation runs nothing: reported only
    notes = [f for f in findings if f.severity == "info" and f.message.startswith("annotation")]
    assert [f.line for f in notes] == [4]
    assert out.count("TODO(trl-compat)") == 1


def test_string_annotations_read_pretrained_model_and_no_unused_factory_import():
    """llama-factory's test_utils.py: `self: "AutoModelForCausalLMWithValueHead"` read "AutoModelForCausalLM" (a
    factory no model is an instance of) under a marker meant for isinstance checks; where the file only names the
    class in type positions, the factory import the rule wrote stayed unused (ruff F401)."""
    out, findings = run(RULE, """\
        from trl import AutoModelForCausalLMWithValueHead


        def patch(m: "AutoModelForCausalLMWithValueHead", n: AutoModelForCausalLMWithValueHead) -> None:
            if isinstance(n, AutoModelForCausalLMWithValueHead):
                print(m, "AutoModelForCausalLMWithValueHead")
    """)
    assert 'def patch(m: "PreTrainedModel", n: PreTrainedModel) -> None:' in out
    assert 'print(m, "AutoModelForCausalLMWithValueHead")' in out  # a plain string is no annotation
    assert "from transformers import PreTrainedModel\n" in out and "AutoModelForCausalLM," not in out
    assert [f.line for f in findings if f.severity == "manual"] == [5]


def test_a_repeated_step_in_one_statement_is_one_marker_and_one_finding():
    """`model.v_head = model.v_head.to(...)` asks the same thing twice in one statement: one marker, and one
    manual finding, so the report's count of steps left equals the markers a later `--check` finds."""
    out, findings = run(RULE, """\
        import torch
        from trl import AutoModelForCausalLMWithValueHead, GRPOTrainer

        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        model.v_head = model.v_head.to(torch.float16)
        trainer = GRPOTrainer(model, reward_funcs=[])
    """)
    manual = [f for f in findings if f.severity == "manual"]
    assert len(manual) == out.count("TODO(trl-compat)") == 1


def test_value_head_handed_to_a_trainer_is_not_kept():
    out, _ = run(RULE, """\
        from trl import AutoModelForCausalLMWithValueHead

        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        _, _, values = model(ids)
        trainer = GRPOTrainer(model, args)
    """)
    assert "compat.value_head" not in out and "AutoModelForCausalLM.from_pretrained" in out


def test_wrapper_attributes_on_objects_not_followed_are_marked():
    out, findings = run(RULE, """\
        from trl import AutoModelForCausalLMWithValueHead

        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
        trainer = build(model)
        base = trainer.model.pretrained_model
        head = trainer.model.v_head
    """)
    assert 'model = AutoModelForCausalLM.from_pretrained("gpt2")' in out
    marked = sorted(f.line for f in findings if f.severity == "manual")
    assert marked == [5, 6]
    assert out.count("# TODO(trl-compat): trainer.model.") == 2


def test_no_second_import_of_a_name_the_file_already_imports():
    check(RULE, """\
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from trl import AutoModelForCausalLMWithValueHead, PPOConfig

        base = AutoModelForCausalLM.from_pretrained("gpt2")
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
    """, """\
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from trl import PPOConfig

        base = AutoModelForCausalLM.from_pretrained("gpt2")
        model = AutoModelForCausalLM.from_pretrained("gpt2")
    """)


def test_members_of_the_wrapper_class_are_marked():
    """bert4torch 0.3.8 borrowed `AutoModelForCausalLMWithValueHead._init_weights` for its own actor model; the auto
    class the name now reads has no such member, so the line is marked (only `from_pretrained` carries over)."""
    out, findings = run(RULE, """\
        from trl import AutoModelForCausalLMWithValueHead

        init = AutoModelForCausalLMWithValueHead._init_weights
        names = AutoModelForCausalLMWithValueHead.lm_head_namings
        load = AutoModelForCausalLMWithValueHead.from_pretrained
        model = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2")
    """)
    assert sorted(f.line for f in findings if f.severity == "manual") == [3, 4]
    assert "# TODO(trl-compat): `_init_weights` belongs to TRL's value-head wrapper class [value-head-models]" in out
    assert "load = AutoModelForCausalLM.from_pretrained\n" in out


def test_a_value_head_the_code_builds_itself_comes_from_compat():
    """A project's own value-head model (`self.v_head = ValueHead(config)`): the head is used, so its import goes to
    trl-compat's copy instead of being dropped with the name left undefined."""
    findings = check(RULE, """\
        from torch import nn
        from trl.models.modeling_value_head import ValueHead


        class Actor(nn.Module):
            def __init__(self, model, config):
                super().__init__()
                self.module = model
                self.v_head = ValueHead(config, summary_dropout_prob=0.0)
    """, """\
        from torch import nn
        from compat.value_head import ValueHead


        class Actor(nn.Module):
            def __init__(self, model, config):
                super().__init__()
                self.module = model
                self.v_head = ValueHead(config, summary_dropout_prob=0.0)
    """)
    assert not [f for f in findings if f.severity == "manual"]
    assert any("compat.value_head.ValueHead" in f.message for f in findings)


def test_compat_value_head_is_the_head_trl_built():
    """The retargeted head computes what TRL 0.11's `ValueHead` did: dropout (none here) -> Linear(hidden, 1)."""
    from types import SimpleNamespace

    import torch

    from compat.value_head import ValueHead

    head = ValueHead(SimpleNamespace(hidden_size=4), summary_dropout_prob=0.0)
    hidden = torch.randn(2, 3, 4, dtype=torch.float64)
    w = head.summary.weight.detach().double()
    b = head.summary.bias.detach().double()
    expected = torch.einsum("bsh,oh->bso", hidden, w) + b
    torch.testing.assert_close(head(hidden.float()).double(), expected, rtol=1e-5, atol=1e-6)


PATCH_MARK = "# TODO(trl-compat): this file monkeypatches TRL's PreTrainedModelWrapper [value-head-models]"


KEPT_IMPORT = "# TODO(trl-compat): trl.PreTrainedModelWrapper is gone [value-head-models]"


def test_a_subclass_of_the_wrapper_is_kept_as_written_and_marked():
    """YangRui2015/Generalizable-Reward-Model keeps a copy of TRL's `AutoModelForCausalLMWithValueHead(
    PreTrainedModelWrapper)`: on `PreTrainedModel` its `__init__(pretrained_model)` is a TypeError (another
    constructor contract), so the base stays as imported and the class and import are marked; the file's reads of
    `.pretrained_model` are its own class's attributes (no marker)."""
    out, findings = run(RULE, """\
        from trl import PreTrainedModelWrapper


        class AutoModelForCausalLMWithValueHead(PreTrainedModelWrapper):
            pass


        model = AutoModelForCausalLMWithValueHead.from_pretrained("m")
        model.pretrained_model.resize_token_embeddings(3)
    """)
    lines = out.splitlines()
    assert lines[0] == KEPT_IMPORT and lines[1] == "from trl import PreTrainedModelWrapper", out
    assert lines[4].startswith("# TODO(trl-compat): AutoModelForCausalLMWithValueHead derives")
    assert lines[5] == "class AutoModelForCausalLMWithValueHead(PreTrainedModelWrapper):"
    assert out.count("TODO(trl-compat)") == 2 and "model.pretrained_model.resize_token_embeddings(3)" in out
    assert any("trl/models/modeling_base.py" in f.message for f in findings)


def test_a_subclass_of_the_causal_wrapper_derives_from_the_compat_copy():
    """AI-Plans/Model-Diffing `PatchedWithValueHead(AutoModelForCausalLMWithValueHead)` reads `self.pretrained_model`
    and `self.v_head`: on the `AutoModelForCausalLM` factory it could not even be built; trl-compat's copy keeps that
    API. Every use of the file stays as written (no `(model)` unwrapping, no `.pretrained_model` rewrite)."""
    out, findings = run(RULE, """\
        from trl import AutoModelForCausalLMWithValueHead


        class PatchedWithValueHead(AutoModelForCausalLMWithValueHead):
            def forward(self, *args, **kwargs):
                out = self.pretrained_model(*args, **kwargs)
                return out.logits, None, self.v_head(out.hidden_states[-1]).squeeze(-1)


        policy = PatchedWithValueHead(base_model)
        policy.pretrained_model.push_to_hub("x")
    """)
    assert out.splitlines()[0] == "from compat.value_head import AutoModelForCausalLMWithValueHead", out
    assert "# TODO(trl-compat): PatchedWithValueHead derives" in out
    assert any("derives from compat.value_head's copy" in f.message or "compat.value_head's copy" in f.message
               for f in findings)
    assert "class PatchedWithValueHead(AutoModelForCausalLMWithValueHead):" in out
    assert "policy = PatchedWithValueHead(base_model)\npolicy.pretrained_model.push_to_hub" in out
    import ast
    ast.parse(out)


def test_a_monkeypatched_wrapper_class_is_kept_as_written():
    """optimum-habana's Gaudi adapter sets methods on the wrapper class: on `PreTrainedModel` (every model's base)
    the same lines would patch every transformers model, so nothing is renamed, the patches are marked."""
    findings = check(RULE, """\
        from trl import PreTrainedModelWrapper


        def adapt_to_gaudi():
            PreTrainedModelWrapper._get_current_device = gaudi_get_current_device
            PreTrainedModelWrapper.save_pretrained = gaudi_save_pretrained
    """, f"""\
        from trl import PreTrainedModelWrapper


        def adapt_to_gaudi():
            {PATCH_MARK}
            PreTrainedModelWrapper._get_current_device = gaudi_get_current_device
            {PATCH_MARK}
            PreTrainedModelWrapper.save_pretrained = gaudi_save_pretrained
    """)
    assert not [f for f in findings if f.changed]
    # setattr / del, an alias, the trl.models path; a subclass in the same file keeps the class too
    check(RULE, """\
        from trl.models import PreTrainedModelWrapper as Base

        setattr(Base, "save_pretrained", save)
        del Base.push_to_hub


        class Mine(Base):
            pass
    """, f"""\
        # TODO(trl-compat): trl.models.PreTrainedModelWrapper is gone [value-head-models]
        from trl.models import PreTrainedModelWrapper as Base

        {PATCH_MARK}
        setattr(Base, "save_pretrained", save)
        {PATCH_MARK}
        del Base.push_to_hub


        {PATCH_MARK}
        class Mine(Base):
            pass
    """)


def test_patching_what_is_not_trls_wrapper_is_a_noop():
    noop(RULE, "from transformers import PreTrainedModel\n\nPreTrainedModel.save_pretrained = save\n")
    noop(RULE, "class PreTrainedModelWrapper:\n    pass\n\n\nPreTrainedModelWrapper.save_pretrained = save\n")
    noop(RULE, "from mylib.models import PreTrainedModelWrapper\n\nPreTrainedModelWrapper.save_pretrained = save\n")


def test_a_write_to_supported_architectures_is_marked():
    """bert4torch patches `trl.trainer.ppo_trainer.SUPPORTED_ARCHITECTURES` (the model classes PPOTrainer accepted)
    inside a try: no TRL 1.13+ trainer reads such a list, and the module is gone (the write raises now)."""
    out, findings = run(RULE, """\
        try:
            import trl
            trl.trainer.ppo_trainer.SUPPORTED_ARCHITECTURES = (BaseModel, )
            from trl.models.modeling_value_head import ValueHead
        except ImportError:
            pass
    """)
    assert ("    # TODO(trl-compat): a write to TRL's removed SUPPORTED_ARCHITECTURES [value-head-models]\n"
            "    trl.trainer.ppo_trainer.SUPPORTED_ARCHITECTURES = (BaseModel, )\n") in out
    [msg] = [f.message for f in findings if "SUPPORTED_ARCHITECTURES" in f.message]
    assert "trl.trainer.ppo_trainer is gone, so the write raises AttributeError now" in msg
    out, findings = run(RULE, "import trl.models\nimport trl\ntrl.models.SUPPORTED_ARCHITECTURES = (M,)\n"
                              "from trl import AutoModelForCausalLMWithValueHead\n")
    [msg] = [f.message for f in findings if "SUPPORTED_ARCHITECTURES" in f.message]
    assert "raises" not in msg  # trl.models still exists: the write succeeds, it is only useless


def test_supported_architectures_noops():
    noop(RULE, "import mylib\nfrom trl import GRPOTrainer\nmylib.ppo_trainer.SUPPORTED_ARCHITECTURES = (M,)\n")
    noop(RULE, "SUPPORTED_ARCHITECTURES = (M,)\nfrom trl import GRPOTrainer\n")


def test_supported_architectures_still_read_keeps_its_import_marked():
    """A review of a migrated tree: `from trl import SUPPORTED_ARCHITECTURES` was dropped while a module-level line and
    an isinstance check still read the name (an ImportError became a NameError). The import now stays as written,
    marked with the lines that read it; the rest of the file migrates as before."""
    out, findings = run(RULE, """\
        from trl import AutoModelForCausalLMWithValueHead, SUPPORTED_ARCHITECTURES

        ARCHS = SUPPORTED_ARCHITECTURES + (object,)


        def build(name):
            model = AutoModelForCausalLMWithValueHead.from_pretrained(name)
            assert isinstance(model, SUPPORTED_ARCHITECTURES)
            return model
        """)
    assert "from trl import SUPPORTED_ARCHITECTURES\n" in out
    assert "from transformers import AutoModelForCausalLM\n" in out
    assert out.splitlines()[0].startswith("# TODO(trl-compat): trl.SUPPORTED_ARCHITECTURES is gone")
    manual = [f for f in findings if f.severity == "manual"]
    assert len(manual) == 1 and "line(s) 3, 8 read it" in manual[0].message
    # only the import names it: nothing was dropped that a line still reads
    assert out.count("SUPPORTED_ARCHITECTURES") == 4


def test_supported_architectures_read_by_a_copy_of_the_step_loop_trainer_is_compats():
    """yongzhuo/chatglm-maths's models/ppo_trainer.py, a copy of TRL 0.4's PPOTrainer: `isinstance(model,
    SUPPORTED_ARCHITECTURES)` on the model it is handed (built by the scripts, whose value head goes to
    compat.value_head). The file builds no value-head model itself: the tuple is compat.value_head's."""
    out, findings = run(RULE, """\
        from trl.models import SUPPORTED_ARCHITECTURES, create_reference_model


        CARD = "from trl import AutoModelForCausalLMWithValueHead"  # a model card's example: a string, not code


        class PPOTrainer:
            def __init__(self, model):
                if not isinstance(model, SUPPORTED_ARCHITECTURES):
                    raise ValueError(f"supported architectures are: {SUPPORTED_ARCHITECTURES}")
                self.ref = create_reference_model(model)
        """)
    assert out.startswith("from trl.models import create_reference_model\n"
                          "from compat.value_head import SUPPORTED_ARCHITECTURES\n"), out
    assert "TODO" not in out and not [f for f in findings if f.severity == "manual"]
    import compat.value_head

    assert compat.value_head.SUPPORTED_ARCHITECTURES == (compat.value_head.AutoModelForCausalLMWithValueHead,)
    # the seq2seq wrapper named beside it: kept as written, marked (compat's tuple lacks that class)
    out, _ = run(RULE, "from trl import SUPPORTED_ARCHITECTURES, AutoModelForSeq2SeqLMWithValueHead\n\n"
                 "m = AutoModelForSeq2SeqLMWithValueHead.from_pretrained('t5-small')\n"
                 "ok = isinstance(m, SUPPORTED_ARCHITECTURES)\n")
    assert "from trl import SUPPORTED_ARCHITECTURES" in out and "is gone" in out


def test_supported_architectures_import_only_is_dropped():
    out, _ = run(RULE, "from trl import SUPPORTED_ARCHITECTURES, AutoModelForCausalLMWithValueHead\n\n"
                 "m = AutoModelForCausalLMWithValueHead.from_pretrained('x')\n")
    assert "SUPPORTED_ARCHITECTURES" not in out


def test_value_head_named_without_a_call_goes_to_compat():
    """`ValueHead` read in an isinstance check or bound to a name (not called): the same class lives in
    compat.value_head, so the import goes there; it was dropped before, leaving a NameError behind a marker."""
    check(RULE, """\
        from trl.models.modeling_value_head import ValueHead


        def heads(model):
            return [m for m in model.modules() if isinstance(m, ValueHead)]
        """, """\
        from compat.value_head import ValueHead


        def heads(model):
            return [m for m in model.modules() if isinstance(m, ValueHead)]
        """)


def test_a_kbit_model_with_peft_config_is_prepared_as_trl_did():
    """TRL 0.7.4 - 0.11.4 `PreTrainedModelWrapper.from_pretrained`: a model id with a true load_in_8bit / load_in_4bit
    and a peft_config ran `prepare_model_for_kbit_training` before `get_peft_model` (TRL's stack_llama rl_training.py).
    The rewrite kept only get_peft_model; now the same two steps. A flag from an option is marked."""
    check(RULE, """\
        from peft import LoraConfig
        from trl import AutoModelForCausalLMWithValueHead

        lora_config = LoraConfig(r=8)
        model = AutoModelForCausalLMWithValueHead.from_pretrained(
            name, load_in_8bit=True, device_map={"": 0}, peft_config=lora_config)
        """, """\
        from peft import LoraConfig, prepare_model_for_kbit_training, get_peft_model
        from transformers import AutoModelForCausalLM

        lora_config = LoraConfig(r=8)
        # TODO(trl-compat): if name holds a trained PEFT adapter [value-head-models]
        model = get_peft_model(prepare_model_for_kbit_training(AutoModelForCausalLM.from_pretrained(
            name, load_in_8bit=True, device_map={"": 0})), lora_config)
        """, stack={"transformers": "4.57.6"})
    out, findings = run(RULE, """\
        from trl import AutoModelForCausalLMWithValueHead

        a = AutoModelForCausalLMWithValueHead.from_pretrained(name, load_in_4bit=True, peft_config=lora_config)
        b = AutoModelForCausalLMWithValueHead.from_pretrained(name, load_in_8bit=args.int8, peft_config=lora_config)
        c = AutoModelForCausalLMWithValueHead.from_pretrained(name, load_in_8bit=False, peft_config=lora_config)
        """)
    manual = [f.message for f in findings if f.severity == "manual"]
    assert any("device_map" in m for m in manual) and any("do the same where it is" in m for m in manual)
    assert out.count("prepare_model_for_kbit_training(") == 1  # a's call; not b's, not c's


def test_a_method_of_the_wrapped_model_is_no_wrapper_class_member():
    """umass-ml4ed/feedback-gen-dpo: `AutoModelForCausalLMWithValueHead(model).to(device)` -> `model.to(device)` was
    marked as if `.to` were a member of the wrapper class (it is torch's, on every model)."""
    out, findings = run(RULE, "from trl import AutoModelForCausalLMWithValueHead\n\n"
                              "def load(model, device):\n"
                              "    return AutoModelForCausalLMWithValueHead(model).to(device)\n")
    assert "return model.to(device)" in out
    assert not [f for f in findings if f.severity == "manual"]


def test_a_model_handed_to_the_projects_own_code_keeps_its_head(tmp_path):
    """entfane/RLHF: the policy goes to the project's own `PPOTrainer` (src/ppo_trainer.py, no TRL), which unpacks
    `(logits, _, values)` and reads `.v_head`; Pillars-Creation's `load_pretrained` hands the reward-model stage's
    model to its own `load_valuehead_params`. Both keep the wrapper through compat.value_head. A model handed to
    TRL's PPOTrainer, or to a project subclass of it, still becomes the plain causal LM."""
    (tmp_path / "ppo_trainer.py").write_text("class PPOTrainer:\n    def __init__(self, policy):\n"
                                             "        self.v = policy.v_head\n", encoding="utf-8")
    (tmp_path / "trl_based.py").write_text("from trl import PPOTrainer as Base\n\nclass ChatTrainer(Base):\n"
                                           "    pass\n", encoding="utf-8")
    own = ("from trl import AutoModelForCausalLMWithValueHead\nfrom ppo_trainer import PPOTrainer\n\n"
           "policy = AutoModelForCausalLMWithValueHead.from_pretrained('gpt2')\ntrainer = PPOTrainer(policy)\n")
    out, _ = run(RULE, own, dedent=False, path=str(tmp_path / "main.py"))
    assert out == own.replace("from trl import", "from compat.value_head import")
    local = ("from trl import AutoModelForCausalLMWithValueHead\n\n\ndef load_valuehead_params(model, path):\n"
             "    pass\n\n\nmodel = AutoModelForCausalLMWithValueHead.from_pretrained(base)\n"
             "load_valuehead_params(model, 'rm')\n")
    out, _ = run(RULE, local, dedent=False, path=str(tmp_path / "common.py"))
    assert "from compat.value_head import AutoModelForCausalLMWithValueHead" in out
    for trainer in ("from trl import PPOTrainer\n", "from trl_based import ChatTrainer as PPOTrainer\n"):
        fed = ("from trl import AutoModelForCausalLMWithValueHead\n" + trainer +
               "\npolicy = AutoModelForCausalLMWithValueHead.from_pretrained('gpt2')\n"
               "policy.v_head\ntrainer = PPOTrainer(config, policy)\n")
        out, _ = run(RULE, fed, dedent=False, path=str(tmp_path / "train.py"))
        assert "AutoModelForCausalLM.from_pretrained('gpt2')" in out, trainer


def test_subscripted_annotations_never_name_the_factory():
    """KMnO4-zx/huanhuan-chat: `-> Tuple[PreTrainedModel, AutoModelForCausalLMWithValueHead]` read
    `AutoModelForCausalLM` inside the subscript."""
    out, _ = run(RULE, """\
        from typing import Optional, Tuple
        from trl import AutoModelForCausalLMWithValueHead


        def load(path) -> Tuple[AutoModelForCausalLMWithValueHead, int]:
            return AutoModelForCausalLMWithValueHead.from_pretrained(path), 1


        def f(m: Optional[AutoModelForCausalLMWithValueHead], n: AutoModelForCausalLMWithValueHead | None) -> None:
            pass
    """)
    assert "-> Tuple[PreTrainedModel, int]" in out
    assert "def f(m: Optional[PreTrainedModel], n: PreTrainedModel | None)" in out
    assert "return AutoModelForCausalLM.from_pretrained(path), 1" in out


def test_a_peft_config_that_may_be_none_keeps_the_wrappers_test():
    """chansmi/collaborative-stegosystem: `peft_config = LoraConfig(...)` under `if args.use_peft:`, `peft_config =
    None` otherwise (the default). The wrapper skipped PEFT for None; `get_peft_model(model, None)` is an
    AttributeError, so the test stays. A name bound only to a config call is wrapped without it."""
    out, _ = run(RULE, """\
        from peft import LoraConfig
        from trl import AutoModelForCausalLMWithValueHead

        if use_peft:
            peft_config = LoraConfig(r=8)
        else:
            peft_config = None
        m = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", peft_config=peft_config)
    """)
    assert ('m = get_peft_model(AutoModelForCausalLM.from_pretrained("gpt2"), peft_config) if peft_config is not None '
            'else AutoModelForCausalLM.from_pretrained("gpt2")') in out, out


def test_a_class_alias_chosen_by_a_condition_passes_peft_config_like_the_class():
    """TRL 0.7 - 0.11 examples/scripts/ppo.py: `trl_model_class = AutoModelForCausalLMWithValueHead if not
    args.use_seq2seq else AutoModelForSeq2SeqLMWithValueHead`, then `trl_model_class.from_pretrained(...,
    peft_config=peft_config)`: transformers' from_pretrained hands `peft_config` to the model's constructor (a
    TypeError on 5.x), so the call gets the wrapper's get_peft_model like a call of the class itself; the seq2seq arm
    is marked at the alias."""
    out, findings = run(RULE, """\
        from trl import AutoModelForCausalLMWithValueHead, AutoModelForSeq2SeqLMWithValueHead

        trl_model_class = AutoModelForCausalLMWithValueHead if not seq2seq else AutoModelForSeq2SeqLMWithValueHead
        peft_config = None
        model = trl_model_class.from_pretrained(name, device_map=device_map, peft_config=peft_config)
    """)
    assert "trl_model_class = AutoModelForCausalLM if not seq2seq else AutoModelForSeq2SeqLM" in out, out
    assert ("model = get_peft_model(trl_model_class.from_pretrained(name, device_map=device_map), peft_config) if "
            "peft_config is not None else trl_model_class.from_pretrained(name, device_map=device_map)") in out, out
    assert "peft_config=peft_config" not in out
    assert any("seq2seq value-head model" in f.message and f.line == 3 for f in findings)


def test_is_trainable_with_a_model_object_did_nothing_and_is_dropped():
    """TRL 0.11.4's wrapper read `is_trainable` only to load an adapter from a path (`PeftModel.from_pretrained(...,
    is_trainable=is_trainable)`); the Coursera detox lab passes a PeftModel object: the keyword did nothing, so it
    goes without a marker. From a path it stays marked."""
    out, findings = run(RULE, """\
        from trl import AutoModelForSeq2SeqLMWithValueHead

        peft_model = PeftModel.from_pretrained(base, "./ckpt", is_trainable=True)
        ppo_model = AutoModelForSeq2SeqLMWithValueHead.from_pretrained(peft_model, torch_dtype=dt, is_trainable=True)
        other = AutoModelForSeq2SeqLMWithValueHead.from_pretrained("./adapter", is_trainable=True)
    """)
    assert "ppo_model = peft_model\n" in out or "ppo_model = peft_model" in out, out
    assert not any("is_trainable=True was" in f.message and f.line == 4 for f in findings)
    assert any("is_trainable=True was" in f.message and f.line == 5 for f in findings)


def test_kept_wrapper_loads_a_trained_adapter_folder_as_trl_did(tmp_path, caplog):
    """TRL 0.11.4 `PreTrainedModelWrapper.from_pretrained(adapter_dir, peft_config=cfg)` (medgpt's evaluation): a
    folder with `adapter_config.json` loaded its base model and the trained adapter (`PeftModel.from_pretrained(...,
    is_trainable=)`), ignoring `peft_config`; its v_head came from the `pytorch_model.bin` TRL's save wrote beside the
    adapter. Oracle: the adapter and head weights saved, read back from the files."""
    import torch
    from peft import LoraConfig, PeftModel, get_peft_model
    from safetensors.torch import load_file

    from compat.tiny import tiny_model
    from compat.value_head import AutoModelForCausalLMWithValueHead

    base_dir, adapter_dir = tmp_path / "base", tmp_path / "adapter"
    tiny_model(seed=4).save_pretrained(base_dir)
    trained = get_peft_model(tiny_model(seed=4), LoraConfig(r=4, target_modules=["q_proj"], init_lora_weights=False))
    trained.peft_config["default"].base_model_name_or_path = str(base_dir)
    trained.save_pretrained(adapter_dir)
    head = {"v_head.summary.weight": torch.randn(1, trained.config.hidden_size), "v_head.summary.bias": torch.ones(1)}
    torch.save(head, adapter_dir / "pytorch_model.bin")  # where TRL 0.x saved a PEFT wrapper's head
    saved = load_file(adapter_dir / "adapter_model.safetensors")

    with caplog.at_level("WARNING"):
        model = AutoModelForCausalLMWithValueHead.from_pretrained(
            str(adapter_dir), peft_config=LoraConfig(r=2, target_modules=["v_proj"]))
    assert "peft_config` argument ignored" in caplog.text
    inner = model.pretrained_model
    assert isinstance(inner, PeftModel) and inner.peft_config["default"].r == 4
    loaded = {k: v for k, v in inner.state_dict().items() if "lora_" in k}
    assert len(loaded) == len(saved) > 0
    for key, value in saved.items():
        match = [v for k, v in loaded.items() if k.replace(".default", "") == key]
        assert len(match) == 1 and torch.equal(match[0], value), key
    assert not any("v_proj.lora" in k for k in inner.state_dict())
    assert torch.equal(model.v_head.summary.weight, head["v_head.summary.weight"])
    assert not any(p.requires_grad for n, p in inner.named_parameters() if "lora_" in n)  # is_trainable=False
    trainable = AutoModelForCausalLMWithValueHead.from_pretrained(str(adapter_dir), is_trainable=True)
    assert any(p.requires_grad for n, p in trainable.pretrained_model.named_parameters() if "lora_" in n)
    with pytest.raises(NotImplementedError, match="reward_adapter"):
        AutoModelForCausalLMWithValueHead.from_pretrained(str(adapter_dir), reward_adapter="rm")


def test_from_pretrained_with_peft_config_of_what_may_be_a_trained_adapter_is_marked(tmp_path):
    """TRL 0.4 - 1.12's wrapper loaded a folder or Hub repo holding `adapter_config.json` as its base model plus that
    trained adapter and ignored `peft_config` (read in the 0.4.7 and 0.8.6 sources); `get_peft_model` always starts
    a new adapter. A path computed at run time (the SFT run's output folder) or a literal that names an adapter is
    marked; a Hub id such as "gpt2" is not, and neither is a model object or `peft_config=None`."""
    (tmp_path / "sft_out").mkdir()
    (tmp_path / "sft_out" / "adapter_config.json").write_text("{}", encoding="utf-8")
    (tmp_path / "merged").mkdir()
    out, findings = run(RULE, """\
        from transformers import AutoModelForCausalLM
        from trl import AutoModelForCausalLMWithValueHead

        a = AutoModelForCausalLMWithValueHead.from_pretrained(script_args.model_name, peft_config=lora_config)
        b = AutoModelForCausalLMWithValueHead.from_pretrained("gpt2", peft_config=lora_config)
        c = AutoModelForCausalLMWithValueHead.from_pretrained("sft_out", peft_config=lora_config)
        d = AutoModelForCausalLMWithValueHead.from_pretrained("merged", peft_config=lora_config)
        e = AutoModelForCausalLMWithValueHead.from_pretrained("me/opt-350m-lora", peft_config=lora_config)
        f = AutoModelForCausalLMWithValueHead.from_pretrained(script_args.model_name, peft_config=None)
        base_model = AutoModelForCausalLM.from_pretrained("gpt2")
        g = AutoModelForCausalLMWithValueHead.from_pretrained(base_model, peft_config=lora_config)
        """, path=str(tmp_path / "ppo.py"))
    marked = sorted(f.line for f in findings if "holds a trained PEFT adapter" in f.message)
    assert marked == [4, 6, 8], (marked, out)
    assert out.count("get_peft_model(") == 6


def test_kept_wrapper_loads_a_trained_adapter_from_a_hub_repo_as_trl_did(tmp_path, monkeypatch):
    """TRL 0.4 - 1.12 also looked the adapter up on the Hub (`hf_hub_download(name, "adapter_config.json")`): a Hub
    repo holding a trained adapter loaded like a folder. No network here: the repo is laid out in a Hub cache of the
    test's own (refs/main -> snapshots/<commit>/) and the Hub is offline, as in TRL's own offline runs. A model id whose
    repo is not in that cache (offline: `LocalEntryNotFoundError`) is a plain model, as in TRL."""
    import torch
    from huggingface_hub import constants
    from peft import LoraConfig, PeftModel, get_peft_model

    from compat.tiny import tiny_model
    from compat.value_head import AutoModelForCausalLMWithValueHead

    base_dir = tmp_path / "base"
    tiny_model(seed=5).save_pretrained(base_dir)
    trained = get_peft_model(tiny_model(seed=5), LoraConfig(r=4, target_modules=["q_proj"], init_lora_weights=False))
    trained.peft_config["default"].base_model_name_or_path = str(base_dir)
    cache = tmp_path / "hub"
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = cache / "models--me--sft-adapter"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit, encoding="utf-8")
    trained.save_pretrained(repo / "snapshots" / commit)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    try:  # peft itself must be able to read a Hub repo here (TRL and the wrapper hand it the repo id)
        PeftModel.from_pretrained(tiny_model(seed=5), "me/sft-adapter")
    except (TypeError, ValueError) as e:  # peft 0.13 passes use_auth_token=, which huggingface_hub 1.x rejects
        import huggingface_hub
        import peft

        pytest.skip(f"peft {peft.__version__} cannot read a Hub repo with huggingface_hub "
                    f"{huggingface_hub.__version__}: {e}")

    model = AutoModelForCausalLMWithValueHead.from_pretrained("me/sft-adapter", peft_config=LoraConfig(r=2))
    inner = model.pretrained_model
    assert isinstance(inner, PeftModel) and inner.peft_config["default"].r == 4
    expected = {k: v for k, v in trained.state_dict().items() if "lora_" in k}
    loaded = {k: v for k, v in inner.state_dict().items() if "lora_" in k}
    assert expected.keys() == loaded.keys() and all(torch.equal(expected[k], loaded[k]) for k in expected)
    plain = AutoModelForCausalLMWithValueHead.from_pretrained(str(base_dir), peft_config=LoraConfig(r=2))
    assert plain.pretrained_model.peft_config["default"].r == 2  # a folder without adapter_config.json: a new one
