"""`trainer-processing-class`: before/after and no-op cases."""

from __future__ import annotations

from migrations.atlas import Atlas
from migrations.transformers.v5_0.trainer_processing_class import MIGRATION as RULE
from tests.migrations._driver import check, noop


def test_renamed():
    check(RULE, "from transformers import Trainer\nt = Trainer(model=m, args=a, tokenizer=tok)\n",
          "from transformers import Trainer\nt = Trainer(model=m, args=a, processing_class=tok)\n")


def test_facts():
    atlas = Atlas.load("transformers")
    assert atlas.accepts("4.56.2", "transformers.Trainer", "processing_class") == "parameter"
    assert atlas.accepts("5.24.0", "transformers.Trainer", "processing_class") == "parameter"
    assert atlas.accepts("4.56.2", "transformers.Trainer", "tokenizer") == "alias"
    assert atlas.accepts("5.0.0", "transformers.Trainer", "tokenizer") is None


def test_noop():
    noop(RULE, "from trl import SFTTrainer\nt = SFTTrainer(model=m, tokenizer=tok)\n")
    noop(RULE, "from transformers import Trainer\nt = Trainer(model=m, tokenizer=tok)\n", stack={"transformers": "4.57.6"})


def test_a_subclass_in_the_file_and_its_super_call():
    # the medicalgpt / stack_llama shape: a compute_loss override, called with tokenizer=
    check(RULE, "from transformers import Trainer\n\n\nclass RewardTrainer(Trainer):\n"
                "    def compute_loss(self, model, inputs, return_outputs=False):\n"
                "        ids = self.tokenizer(inputs)\n        return 0.0\n\n\n"
                "trainer = RewardTrainer(model=m, args=a, tokenizer=tok)\n",
          "from transformers import Trainer\n\n\nclass RewardTrainer(Trainer):\n"
          "    def compute_loss(self, model, inputs, return_outputs=False):\n"
          "        ids = self.processing_class(inputs)\n        return 0.0\n\n\n"
          "trainer = RewardTrainer(model=m, args=a, processing_class=tok)\n")
    check(RULE, "import transformers\n\n\nclass A(transformers.Seq2SeqTrainer):\n"
                "    def __init__(self, *args, gamma=1.0, **kwargs):\n"
                "        super().__init__(*args, tokenizer=kwargs.get('tok'), **kwargs)\n\n\n"
                "class B(A):\n    pass\n\n\nB(model=m, tokenizer=tok)\n",
          "import transformers\n\n\nclass A(transformers.Seq2SeqTrainer):\n"
          "    def __init__(self, *args, gamma=1.0, **kwargs):\n"
          "        super().__init__(*args, processing_class=kwargs.get('tok'), **kwargs)\n\n\n"
          "class B(A):\n    pass\n\n\nB(model=m, processing_class=tok)\n")


def test_a_subclass_that_takes_tokenizer_itself_keeps_its_api():
    src = ("from transformers import Trainer\n\n\nclass T(Trainer):\n"
           "    def __init__(self, model, tokenizer, **kw):\n        self.tokenizer = tokenizer\n"
           "        super().__init__(model=model, tokenizer=tokenizer, **kw)\n\n\nT(m, tokenizer=tok)\n")
    check(RULE, src, src.replace("super().__init__(model=model, tokenizer=tokenizer", "super().__init__(model=model, "
                                 "processing_class=tokenizer"))
    # its __init__ reads the key out of **kwargs: the caller's keyword is its own, left alone
    noop(RULE, "from transformers import Trainer\n\n\nclass T(Trainer):\n    def __init__(self, **kw):\n"
               "        self.t = kw.pop('tokenizer')\n        super().__init__(**kw)\n\n\nT(tokenizer=tok)\n")


def test_a_subclass_imported_from_a_project_module(tmp_path):
    from packaging.version import Version

    from compat.migrate.engine import migrate_source
    from migrations.base import Options

    pkg = tmp_path / "src" / "proj" / "train"
    pkg.mkdir(parents=True)
    (pkg / "trainer.py").write_text("from transformers import Trainer\n\n\nclass PairwiseTrainer(Trainer):\n"
                                    "    pass\n", encoding="utf-8")
    (tmp_path / "src" / "proj" / "other.py").write_text("from transformers import Seq2SeqTrainer as S\n\n\n"
                                                        "class CustomTrainer(S):\n    pass\n", encoding="utf-8")
    src = ("from .trainer import PairwiseTrainer\nfrom proj.other import CustomTrainer\n\n"
           "PairwiseTrainer(model=m, tokenizer=tok)\nCustomTrainer(model=m, tokenizer=tok)\n")
    options = Options(target_trl=Version("1.16.0"), targets=(("transformers", Version("5.24.0")),))
    res = migrate_source(src, options=options, rules=[RULE], path=str(pkg / "workflow.py"), verify_idempotent=True)
    assert res.ok, res.errors
    assert res.text == src.replace("tokenizer=tok", "processing_class=tok")



def test_a_subclass_imported_inside_the_calling_function(tmp_path):
    from packaging.version import Version

    from compat.migrate.engine import migrate_source
    from migrations.base import Options

    (tmp_path / "trainer.py").write_text("from transformers import Trainer\n\n\nclass PairwiseTrainer(Trainer):\n"
                                         "    pass\n", encoding="utf-8")
    src = ("def main():\n    from trainer import PairwiseTrainer\n    PairwiseTrainer(model=m, tokenizer=tok)\n\n\n"
           "def other():\n    from elsewhere import PairwiseTrainer\n    PairwiseTrainer(model=m, tokenizer=tok)\n")
    options = Options(target_trl=Version("1.16.0"), targets=(("transformers", Version("5.24.0")),))
    res = migrate_source(src, options=options, rules=[RULE], path=str(tmp_path / "run.py"), verify_idempotent=True)
    assert res.ok, res.errors
    assert res.text == src.replace("tokenizer=tok", "processing_class=tok", 1)

def test_subclass_noops():
    # two bases: the MRO decides where tokenizer= goes
    noop(RULE, "from transformers import Trainer\n\n\nclass T(Mixin, Trainer):\n    pass\n\n\nT(tokenizer=tok)\n")
    # a local class that only shares the name
    noop(RULE, "class Trainer:\n    pass\n\n\nclass T(Trainer):\n    pass\n\n\nT(tokenizer=tok)\n")
    # self.tokenizer assigned by the class itself is its own attribute
    noop(RULE, "from transformers import Trainer\n\n\nclass T(Trainer):\n    def setup(self, tok):\n"
               "        self.tokenizer = tok\n\n    def f(self):\n        return self.tokenizer\n")
    # a parameter shadowing the class name
    noop(RULE, "from transformers import Trainer\n\n\nclass T(Trainer):\n    pass\n\n\n"
               "def f(T):\n    return T(tokenizer=tok)\n")


def test_super_spelled_out_with_the_class_and_self():
    # firefly's component/trainer.py: a subclass named like the library class takes tokenizer= itself (its callers
    # keep it) and passes it on through `super(Trainer, self).__init__`
    src = ("import transformers\n\n\nclass Trainer(transformers.Trainer):\n"
           "    def __init__(self, model=None, tokenizer=None, compute_loss=None):\n"
           "        super(Trainer, self).__init__(model=model, tokenizer=tokenizer)\n"
           "        self.loss_func = compute_loss\n\n\nt = Trainer(model=m, tokenizer=tok)\n")
    check(RULE, src, src.replace("super(Trainer, self).__init__(model=model, tokenizer=tokenizer)",
                                 "super(Trainer, self).__init__(model=model, processing_class=tokenizer)"))


def test_super_of_another_class_or_object_is_left_alone():
    # `super(Base, self)` skips a step of the MRO, `super(T, other)` is not this instance: not what the rule follows
    noop(RULE, "from transformers import Trainer\n\n\nclass T(Trainer):\n"
               "    def __init__(self, tok):\n        super(Trainer, self).__init__(tokenizer=tok)\n")
    noop(RULE, "from transformers import Trainer\n\n\nclass T(Trainer):\n"
               "    def __init__(self, tok, other):\n        super(T, other).__init__(tokenizer=tok)\n")
    noop(RULE, "from transformers import Trainer\n\n\nclass T(Trainer):\n"
               "    def __init__(self, tok):\n        def inner(x):\n            super(T, x).__init__(tokenizer=tok)\n")


def test_trainer_init_called_directly_from_a_subclass_of_another_trainer():
    # chuhac/ATM-RAG mito.py: a copy of TRL 0.8's DPOTrainer, subclassing trl's DPOTrainer, calls transformers'
    # constructor itself: the call is transformers.Trainer.__init__ whatever the class; its self.tokenizer is not
    src = ("from transformers import Trainer\nfrom trl import DPOTrainer\n\n\nclass MITOTrainer(DPOTrainer):\n"
           "    def __init__(self, model, tokenizer=None):\n        self.tokenizer = tokenizer\n"
           "        Trainer.__init__(\n            self,\n            model=model,\n            tokenizer=tokenizer,\n"
           "        )\n\n    def f(self):\n        return self.tokenizer\n")
    check(RULE, src, src.replace("            tokenizer=tokenizer,", "            processing_class=tokenizer,"))
    # a local class named Trainer is not transformers'
    noop(RULE, "class Trainer:\n    def __init__(self, tokenizer=None):\n        pass\n\n\nclass X(Trainer):\n"
               "    def __init__(self, tok):\n        Trainer.__init__(self, tokenizer=tok)\n")
