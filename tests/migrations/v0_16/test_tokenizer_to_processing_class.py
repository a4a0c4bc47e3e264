"""Before/after and no-op cases for `tokenizer-to-processing-class`."""

from __future__ import annotations

from migrations.v0_16.tokenizer_to_processing_class import MIGRATION as RULE
from tests.migrations._driver import check, noop, run


def test_keyword_on_stable_and_experimental_trainers():
    check(RULE, """\
        from trl import SFTTrainer, RewardTrainer as RT
        from trl.experimental.orpo import ORPOTrainer
        import trl

        a = SFTTrainer(model, args=cfg, tokenizer=tok)  # keep me
        b = RT(model=m, tokenizer=tok, train_dataset=ds)
        c = ORPOTrainer(
            model,
            tokenizer=tok,
        )
        d = trl.KTOTrainer(model, ref, tokenizer=tok)
    """, """\
        from trl import SFTTrainer, RewardTrainer as RT
        from trl.experimental.orpo import ORPOTrainer
        import trl

        a = SFTTrainer(model, args=cfg, processing_class=tok)  # keep me
        b = RT(model=m, processing_class=tok, train_dataset=ds)
        c = ORPOTrainer(
            model,
            processing_class=tok,
        )
        d = trl.KTOTrainer(model, ref, processing_class=tok)
    """)


def test_deep_module_paths_and_compat():
    check(RULE, """\
        from trl.trainer.dpo_trainer import DPOTrainer
        from compat.trl import BCOTrainer
        DPOTrainer(model, ref, tokenizer=t)
        BCOTrainer(model, ref, tokenizer=t)
    """, """\
        from trl.trainer.dpo_trainer import DPOTrainer
        from compat.trl import BCOTrainer
        DPOTrainer(model, ref, processing_class=t)
        BCOTrainer(model, ref, processing_class=t)
    """)


def test_subclass_super_init_and_explicit_base_init():
    check(RULE, """\
        from trl import DPOTrainer

        class MyDPO(DPOTrainer):
            def __init__(self, *a, tok=None, **kw):
                super().__init__(*a, tokenizer=tok, **kw)

        class Other(DPOTrainer):
            def __init__(self, tok):
                DPOTrainer.__init__(self, tokenizer=tok)
    """, """\
        from trl import DPOTrainer

        class MyDPO(DPOTrainer):
            def __init__(self, *a, tok=None, **kw):
                super().__init__(*a, processing_class=tok, **kw)

        class Other(DPOTrainer):
            def __init__(self, tok):
                DPOTrainer.__init__(self, processing_class=tok)
    """)


def test_both_given_is_marked_old_rloo_left_to_its_rule():
    out, findings = run(RULE, """\
        from trl import SFTTrainer, RLOOTrainer
        SFTTrainer(model, tokenizer=a, processing_class=b)
        RLOOTrainer(config=cfg, tokenizer=tok, policy=p, ref_policy=r, reward_model=rm)
    """)
    assert out.count("# TODO(trl-compat)") == 1
    assert "tokenizer=a, processing_class=b" in out and "config=cfg, tokenizer=tok" in out
    assert [f.severity for f in findings] == ["manual"]


def test_noops():
    # a non-TRL trainer from transformers keeps its own tokenizer= (transformers' own deprecation, not TRL's)
    noop(RULE, """\
        from transformers import Trainer
        Trainer(model, tokenizer=tok)
    """)
    # a local class named like a TRL trainer, a shadowed import, a string, a vendored relative import
    noop(RULE, """\
        from trl import SFTTrainer

        class ORPOTrainer:
            def __init__(self, tokenizer=None):
                pass

        ORPOTrainer(tokenizer=tok)
        msg = "pass tokenizer= to SFTTrainer(tokenizer=tok)"

        def f(SFTTrainer):
            return SFTTrainer(tokenizer=tok)
    """)
    noop(RULE, """\
        from .trl import DPOTrainer
        from .vendored.trl.trainer import SFTTrainer
        DPOTrainer(model, tokenizer=tok)
        SFTTrainer(model, tokenizer=tok)
    """)
    # a subclass of something else: super().__init__(tokenizer=) is not TRL's
    noop(RULE, """\
        from transformers import Trainer
        from trl import SFTConfig

        class Mine(Trainer):
            def __init__(self, tok):
                super().__init__(tokenizer=tok)
    """)
    # positional tokenizer kept its position (SFTTrainer: 6th parameter in 0.8 and 1.16)
    noop(RULE, """\
        from trl import SFTTrainer
        SFTTrainer(model, cfg, None, ds, None, tok)
    """)


def test_applies_to_every_supported_target():
    for target in ("1.13.0", "1.14.0", "1.15.0", "1.16.0"):
        out, _ = run(RULE, "from trl import SFTTrainer\nSFTTrainer(m, tokenizer=t)\n", target=target)
        assert "processing_class=t" in out


def test_tokenizer_attribute_of_trl_trainers():
    check(RULE, """\
        from trl import SFTTrainer

        class MySFT(SFTTrainer):
            def log_sample(self, ids):
                return self.tokenizer.decode(ids)

        class OwnTok(SFTTrainer):
            def __init__(self, *a, tok=None, **kw):
                super().__init__(*a, **kw)
                self.tokenizer = tok

            def f(self, ids):
                return self.tokenizer.decode(ids)

        trainer = SFTTrainer(model, processing_class=tok)
        trainer.tokenizer.save_pretrained("out")
        other.tokenizer.save_pretrained("out")
    """, """\
        from trl import SFTTrainer

        class MySFT(SFTTrainer):
            def log_sample(self, ids):
                return self.processing_class.decode(ids)

        class OwnTok(SFTTrainer):
            def __init__(self, *a, tok=None, **kw):
                super().__init__(*a, **kw)
                self.tokenizer = tok

            def f(self, ids):
                return self.tokenizer.decode(ids)

        trainer = SFTTrainer(model, processing_class=tok)
        trainer.processing_class.save_pretrained("out")
        other.tokenizer.save_pretrained("out")
    """)
    noop(RULE, """\
        from transformers import Trainer
        from trl import SFTConfig

        class Mine(Trainer):
            def f(self):
                return self.tokenizer

        t = Trainer(model)
        t.tokenizer
    """)


def test_project_subclasses_same_module_and_sibling_file(tmp_path):
    (tmp_path / "utils.py").write_text(
        "from trl import RewardTrainer\n\n"
        "class MarginRewardTrainer(RewardTrainer):\n    margin = 0.5\n\n"
        "class OwnTok(RewardTrainer):\n    def __init__(self, model, tokenizer=None):\n        pass\n",
        encoding="utf-8")
    src = """\
        from trl import DPOTrainer
        from utils import MarginRewardTrainer, OwnTok

        class MyDPO(DPOTrainer):
            pass

        MyDPO(model, tokenizer=tok)
        MarginRewardTrainer(model=m, tokenizer=tok)
        OwnTok(m, tokenizer=tok)

        def f(MyDPO):
            return MyDPO(tokenizer=tok)
    """
    out, _ = run(RULE, src, path=str(tmp_path / "train.py"))
    assert "MyDPO(model, processing_class=tok)" in out
    assert "MarginRewardTrainer(model=m, processing_class=tok)" in out
    assert "OwnTok(m, tokenizer=tok)" in out and "return MyDPO(tokenizer=tok)" in out


def test_project_subclass_imported_inside_the_calling_function(tmp_path):
    # dylanjoo/retrisound's shape: `def main(): from trainer import Trainer` (a DPOTrainer subclass of the project's
    # trainer.py), called with TRL 0.x's tokenizer=; and povid's train.py, which calls its DPOTrainer subclass and
    # never names trl (the rule reads files naming `Trainer` too)
    (tmp_path / "trainer.py").write_text(
        "from trl import DPOTrainer\n\n"
        "class Trainer(DPOTrainer):\n    pass\n\n"
        "class OwnTok(DPOTrainer):\n    def __init__(self, model, tokenizer=None):\n        pass\n",
        encoding="utf-8")
    src = """\
        def main():
            from trainer import Trainer
            trainer = Trainer(model=m, tokenizer=tok)

        def own():
            from trainer import OwnTok as T
            T(m, tokenizer=tok)

        def library():
            from transformers import Trainer
            Trainer(model=m, tokenizer=tok)

        def parameter(Trainer):
            Trainer(model=m, tokenizer=tok)

        def rebound():
            from trainer import Trainer
            Trainer = make()
            Trainer(model=m, tokenizer=tok)
    """
    out, findings = run(RULE, src, path=str(tmp_path / "train.py"))
    assert "trainer = Trainer(model=m, processing_class=tok)" in out
    assert out.count("processing_class") == 1, out
    assert [f.line for f in findings if f.changed] == [3]


def test_a_file_naming_only_its_own_subclass_is_read(tmp_path):
    (tmp_path / "povid_trainer.py").write_text(
        "from trl import DPOTrainer\n\nclass PovidDPOTrainer(DPOTrainer):\n    pass\n", encoding="utf-8")
    src = "from povid_trainer import PovidDPOTrainer\n\nt = PovidDPOTrainer(model, tokenizer=tok)\n"
    assert "trl" not in src
    out, _ = run(RULE, src, path=str(tmp_path / "train.py"))
    assert out == "from povid_trainer import PovidDPOTrainer\n\nt = PovidDPOTrainer(model, processing_class=tok)\n"


def test_a_chain_of_project_modules_is_followed(tmp_path):
    """KMnO4-zx/huanhuan-chat: `src/pet/sft/workflow.py` calls `Seq2SeqTrainerForChatGLM(tokenizer=...)` of
    `pet.sft.trainer`, which derives from `PeftTrainer` of `pet.core.trainer`, on TRL's... here on a TRL trainer (the
    transformers rule has the same chain); an import cycle between the modules ends the walk."""
    pkg = tmp_path / "src" / "pet"
    (pkg / "core").mkdir(parents=True)
    (pkg / "sft").mkdir()
    (pkg / "core" / "trainer.py").write_text("from trl import SFTTrainer\nfrom pet.sft.trainer import X\n\n"
                                             "class PeftTrainer(SFTTrainer):\n    pass\n", encoding="utf-8")
    (pkg / "sft" / "trainer.py").write_text("from pet.core.trainer import PeftTrainer\n\n"
                                            "class ChatTrainer(PeftTrainer):\n    pass\n\nclass X:\n    pass\n",
                                            encoding="utf-8")
    src = "from pet.sft.trainer import ChatTrainer\n\nt = ChatTrainer(model=m, tokenizer=tok)\n"
    for name in ("workflow.py", "other.py"):  # the second file reads the modules' answers kept from the first
        out, _ = run(RULE, src, dedent=False, path=str(pkg / "sft" / name))
        assert out == src.replace("tokenizer=tok", "processing_class=tok"), name
