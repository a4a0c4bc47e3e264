"""`load-in-kbit`: before/after, markers and no-op cases; the break and the rewrite run on the installed transformers
(5.x) with a tiny model; the 4.x behaviour the rule keeps read in the 4.56.2 wheel."""

from __future__ import annotations

import ast
import inspect
import zipfile
from pathlib import Path

import pytest

from migrations.transformers.v5_0.load_in_kbit import BNB_KEYWORDS, FLAGS, MIGRATION as RULE
from tests.migrations._driver import check, noop, run

WHEELS = Path(__file__).resolve().parents[4] / ".cache" / "wheels"


def test_the_classic_ppo_value_head_call():
    # TRL 0.4 - 0.11 examples (stack_llama rl_training.py, gpt-neox-20b sentiment): the wrapper forwarded them
    check(RULE, """\
        from trl import AutoModelForCausalLMWithValueHead

        model = AutoModelForCausalLMWithValueHead.from_pretrained(
            config.model_name,
            load_in_8bit=True,
            device_map={"": current_device},
            peft_config=lora_config,
        )
        """, """\
        from trl import AutoModelForCausalLMWithValueHead
        from transformers import BitsAndBytesConfig

        model = AutoModelForCausalLMWithValueHead.from_pretrained(
            config.model_name,
            quantization_config=BitsAndBytesConfig(load_in_8bit=True),
            device_map={"": current_device},
            peft_config=lora_config,
        )
        """)


def test_flags_from_options_and_bitsandbytes_keywords():
    check(RULE, """\
        import torch
        from transformers import AutoModelForCausalLM, BitsAndBytesConfig

        m = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=args.int8, device_map="auto")
        n = AutoModelForCausalLM.from_pretrained(name, load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
        o = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=False, load_in_4bit=None)
        if __name__ == "__main__":
            print(m)
        """, """\
        import torch
        from transformers import AutoModelForCausalLM, BitsAndBytesConfig

        m = AutoModelForCausalLM.from_pretrained(
            name,
            quantization_config=BitsAndBytesConfig(load_in_8bit=args.int8) if args.int8 else None,
            device_map="auto",
        )
        n = AutoModelForCausalLM.from_pretrained(
            name,
            quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16),
        )
        o = AutoModelForCausalLM.from_pretrained(name)
        if __name__ == "__main__":
            print(m)
        """)


def test_what_cannot_be_proved_is_marked():
    out, findings = run(RULE, """\
        from transformers import AutoModelForCausalLM

        a = model_class.from_pretrained(name, load_in_8bit=True)
        b = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=True, quantization_config=q)
        c = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=True, **extra)
        d = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=pick())
        kwargs = {"load_in_8bit": True, "device_map": "auto"}
        more = dict(load_in_4bit=True)
        kwargs["load_in_4bit"] = True
        """)
    manual = [f for f in findings if f.severity == "manual"]
    assert [f.line for f in manual] == [3, 4, 5, 6, 7, 8, 9]
    assert "cannot tell what this from_pretrained belongs to" in manual[0].message
    assert "4.x refused both" in manual[1].message and "**kwargs" in manual[2].message
    assert "side effects" in manual[3].message and "if this dict goes to from_pretrained" in manual[4].message
    assert out.count("# TODO(trl-compat): ") == 7 and "BitsAndBytesConfig" not in out.split("# TODO")[0]


def test_noops():
    src = "from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained(n, load_in_8bit=True)\n"
    noop(RULE, src, stack={"transformers": "4.57.6"})  # 4.x still takes them
    # tokenizers and configs took no such keyword to begin with; a class of the project's own; TRL's ModelConfig field
    noop(RULE, "from transformers import AutoTokenizer\nt = AutoTokenizer.from_pretrained(n, load_in_8bit=True)\n")
    noop(RULE, "from mylib import Loader\nm = Loader.from_pretrained(n, load_in_8bit=True)\n")
    noop(RULE, "from trl import ModelConfig\nc = ModelConfig(model_name_or_path=n, load_in_8bit=True)\n")
    noop(RULE, "print('load_in_8bit=True')\n")


def _tiny_checkpoint(tmp_path: Path) -> str:
    pytest.importorskip("torch")
    from compat.tiny import tiny_model

    tiny_model().save_pretrained(tmp_path)
    return str(tmp_path)


def test_transformers_5_refuses_the_flags_and_takes_the_rewrite(tmp_path):
    transformers = pytest.importorskip("transformers")
    if "load_in_8bit" in inspect.getsource(transformers.PreTrainedModel.from_pretrained):
        pytest.skip("transformers 4.x still takes load_in_8bit")
    path = _tiny_checkpoint(tmp_path)
    with pytest.raises(TypeError, match="load_in_8bit"):
        transformers.AutoModelForCausalLM.from_pretrained(path, load_in_8bit=True)
    # the rewritten call with a false option loads the plain model, as 4.x did
    flag = False
    model = transformers.AutoModelForCausalLM.from_pretrained(
        path, quantization_config=transformers.BitsAndBytesConfig(load_in_8bit=flag) if flag else None)
    assert getattr(model, "quantization_method", None) is None and not getattr(model, "is_loaded_in_8bit", False)


def test_the_config_is_the_one_transformers_4_built():
    """4.x: `BitsAndBytesConfig.from_dict({<bnb keywords of the call>, "load_in_4bit": b, "load_in_8bit": a})`; the
    rewrite calls the constructor with the same keywords: the same config on the installed transformers."""
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    bnb = transformers.BitsAndBytesConfig
    for keywords in ({"load_in_8bit": True, "llm_int8_threshold": 5.0},
                     {"load_in_4bit": True, "bnb_4bit_compute_dtype": torch.bfloat16, "bnb_4bit_quant_type": "nf4"}):
        def outcome(build):  # the config, or the error building it raised (4.56.2 without bitsandbytes: 4-bit)
            try:
                return build().to_dict()
            except Exception as exc:  # noqa: BLE001 - the same failure on both sides is the same behaviour
                return type(exc)

        as_4x = outcome(lambda: bnb.from_dict({"load_in_4bit": False, "load_in_8bit": False, **keywords},
                                              return_unused_kwargs=True)[0])
        assert outcome(lambda: bnb(**keywords)) == as_4x
    params = set(inspect.signature(bnb.__init__).parameters) - {"self", "kwargs", *FLAGS}
    assert params == BNB_KEYWORDS


def test_transformers_4_read_the_flags_as_the_rule_says():
    wheel = next(WHEELS.glob("transformers-4.56.2-*.whl"), None)
    if wheel is None:
        pytest.skip("the transformers 4.56.2 wheel is not cached (make .cache/wheels/.downloaded)")
    with zipfile.ZipFile(wheel) as zf:
        src = zf.read("transformers/modeling_utils.py").decode()
        quant = zf.read("transformers/utils/quantization_config.py").decode()
    assert 'load_in_8bit = kwargs.pop("load_in_8bit", False)' in src
    assert "if load_in_4bit or load_in_8bit:" in src
    assert "config_dict = {k: v for k, v in kwargs.items() if k in inspect.signature(BitsAndBytesConfig).parameters}" \
        in src
    assert "BitsAndBytesConfig.from_dict(\n                config_dict=config_dict, return_unused_kwargs=True, **kwargs" \
        in src
    cls = next(n for n in ast.walk(ast.parse(quant)) if isinstance(n, ast.ClassDef) and n.name == "BitsAndBytesConfig")
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    assert {a.arg for a in init.args.args} - {"self", *FLAGS} == BNB_KEYWORDS  # the same keywords on 4.56.2


def test_compat_value_head_reads_the_flags_itself():
    """`compat.value_head`'s wrapper takes load_in_8bit as TRL's did (prepare_model_for_kbit_training before a
    peft_config): the rule leaves its calls alone; its own translation for transformers 5 uses the same keywords."""
    noop(RULE, "from compat.value_head import AutoModelForCausalLMWithValueHead\n"
               "m = AutoModelForCausalLMWithValueHead.from_pretrained(n, load_in_8bit=True, peft_config=p)\n")
    value_head = pytest.importorskip("compat.value_head")
    assert set(value_head.BNB_KEYWORDS) == BNB_KEYWORDS


def test_compat_value_head_builds_the_config_transformers_4_built():
    transformers = pytest.importorskip("transformers")
    from compat.value_head import _quantization_keywords

    if "load_in_8bit" in inspect.getsource(transformers.PreTrainedModel.from_pretrained):
        assert _quantization_keywords({"load_in_8bit": True}) == {"load_in_8bit": True}  # 4.x: as given
        return
    out = _quantization_keywords({"load_in_8bit": True, "llm_int8_threshold": 5.0, "device_map": "auto"})
    assert out.keys() == {"quantization_config", "device_map"}
    assert out["quantization_config"].to_dict() == transformers.BitsAndBytesConfig(
        load_in_8bit=True, llm_int8_threshold=5.0).to_dict()
    assert _quantization_keywords({"load_in_8bit": False, "device_map": "auto"}) == {"device_map": "auto"}
    with pytest.raises(ValueError, match="at the same time"):
        _quantization_keywords({"load_in_4bit": True, "quantization_config": object()})


def test_a_dict_of_loading_options_is_rewritten_like_the_call():
    """`model_kwargs = dict(load_in_8bit=..., device_map=...)` handed to `from_pretrained(**model_kwargs)`, and a
    display handed to `model_init_kwargs=`: every use is such a hand-over, so the dict gets the call's rewrite; a dict
    used elsewhere (logged, passed to the project's own function) is marked."""
    out, findings = run(RULE, """\
        from transformers import AutoModelForCausalLM
        from trl import SFTTrainer

        def main(script_args, name):
            model_kwargs = dict(load_in_8bit=script_args.load_in_8bit, device_map="auto")
            m = AutoModelForCausalLM.from_pretrained(name, **model_kwargs)
            kw = {"load_in_4bit": True, "bnb_4bit_quant_type": "nf4", "device_map": "auto"}
            t = SFTTrainer(model=name, model_init_kwargs=kw)
            other = {"load_in_8bit": True}
            log(other)
        """)
    assert ("quantization_config=BitsAndBytesConfig(load_in_8bit=script_args.load_in_8bit) if "
            "script_args.load_in_8bit else None,") in out
    assert 'kw = {"quantization_config": BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4"), ' \
           '"device_map": "auto"}' in out
    assert [f.line for f in findings if f.severity == "manual"] == [9]


def test_a_dict_of_loading_options_keeps_its_layout():
    """think-on-graph-mpo's finetune_kg_specialized_llm_cpo.py: a `model_kwargs` dict written one entry per line, with
    a trailing comma, handed to `from_pretrained(**model_kwargs)`, came out on one line. Its layout is kept, and the
    keys keep their quotes."""
    out, _ = run(RULE, """\
        from transformers import AutoModelForCausalLM

        model_kwargs = {
            'trust_remote_code': True,
            "load_in_4bit": args.load_in_4bit,
            "load_in_8bit": args.load_in_8bit,
            'device_map': "auto",
        }
        model = AutoModelForCausalLM.from_pretrained(name, **model_kwargs)
        """)
    assert """model_kwargs = {
    'trust_remote_code': True,
    "quantization_config": BitsAndBytesConfig(load_in_4bit=args.load_in_4bit, load_in_8bit=args.load_in_8bit) \
if args.load_in_4bit or args.load_in_8bit else None,
    'device_map': "auto",
}
""" in out, out


def test_a_pipelines_model_kwargs_are_loading_options():
    """TRL 0.4 - 0.11 stack_llama rl_training.py: `pipeline("sentiment-analysis", ..., model_kwargs={"load_in_8bit":
    True})`: the pipeline loads its model with `from_pretrained(**model_kwargs)`."""
    check(RULE, """\
        from transformers import pipeline

        pipe = pipeline("sentiment-analysis", model=name, model_kwargs={"load_in_8bit": True}, tokenizer=tok)
        """, """\
        from transformers import pipeline, BitsAndBytesConfig

        pipe = pipeline("sentiment-analysis", model=name, model_kwargs={"quantization_config": BitsAndBytesConfig(load_in_8bit=True)}, tokenizer=tok)
        """)


def test_a_comparison_flag_is_read_twice_safely():
    """The think-on-graph-mpo entry's base_hf_causal_model.py: `load_in_8bit=self.args.quant == "8bit"`: a comparison of
    an attribute chain and a literal gives the same value twice, so the option form applies."""
    out, _ = run(RULE, """\
        from transformers import AutoModelForCausalLM

        class Model:
            def load(self):
                return AutoModelForCausalLM.from_pretrained(self.name, load_in_8bit=self.args.quant == "8bit")
        """)
    assert ('quantization_config=BitsAndBytesConfig(load_in_8bit=self.args.quant == "8bit") if self.args.quant == '
            '"8bit" else None') in out


def test_a_name_bound_to_either_of_two_model_classes_is_a_loader():
    """prasanns/rlhf-length-biases' rmcode.py: `modtype = AutoModelForSequenceClassification if rm else
    AutoModelForCausalLM`, then `modtype.from_pretrained(..., load_in_4bit=True)`."""
    out, findings = run(RULE, """\
        from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification

        def load(name, rm):
            modtype = AutoModelForSequenceClassification if rm else AutoModelForCausalLM
            return modtype.from_pretrained(name, load_in_4bit=True)
        """)
    assert "return modtype.from_pretrained(name, quantization_config=BitsAndBytesConfig(load_in_4bit=True))" in out
    assert not [f for f in findings if f.severity == "manual"]


def test_a_conditional_flag_is_parenthesized_in_the_configs_test():
    """A flag written as a conditional expression (SaySelf's style, `True if args.x else False`) went unparenthesized
    into the test of the config's own conditional expression: code that does not parse. Read for its truth it is
    `args.x`; another conditional keeps its value in the config and gets parentheses in the test."""
    out, _ = run(RULE, """\
        from transformers import AutoModelForCausalLM

        m = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=True if args.int8 else False)
        n = AutoModelForCausalLM.from_pretrained(name, load_in_4bit=args.q4 if args.gpu else False, load_in_8bit=a.b)
        """)
    compile(out, "out.py", "exec")
    assert "quantization_config=BitsAndBytesConfig(load_in_8bit=True if args.int8 else False) if args.int8 else None" \
        in out, out
    assert "if (args.q4 if args.gpu else False) or a.b else None" in out, out
