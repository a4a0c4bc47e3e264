"""`migrations.kinds.trainer_subclasses`: which project classes pass a keyword through to a library trainer."""

from __future__ import annotations

import ast

from migrations.kinds.trainer_subclasses import imported_subclasses, subclasses_in

BASES = frozenset({"transformers.Trainer"})


def test_chains_aliases_and_exclusions():
    tree = ast.parse(
        "import transformers as tf\nfrom transformers import Trainer as T\n\n"
        "class A(T):\n    def compute_loss(self, m, i):\n        return 0\n\n"
        "class B(A):\n    def __init__(self, *a, **kw):\n        super().__init__(*a, **kw)\n\n"
        "class C(tf.Trainer):\n    pass\n\n"
        "class Own(T):\n    def __init__(self, tokenizer):\n        pass\n\n"
        "class AfterOwn(Own):\n    pass\n\n"
        "class Reads(T):\n    def __init__(self, **kw):\n        kw.pop('tokenizer')\n\n"
        "class Two(Mixin, T):\n    pass\n\n"
        "class Other(object):\n    pass\n")
    assert subclasses_in(tree, BASES, "tokenizer") == {
        "A": "transformers.Trainer", "B": "transformers.Trainer", "C": "transformers.Trainer"}


def test_imported_from_project_files(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "trainers.py").write_text(
        "from transformers import Trainer\n\nclass RM(Trainer):\n    pass\n", encoding="utf-8")
    (tmp_path / "scripts").mkdir()
    me = tmp_path / "scripts" / "train.py"
    tree = ast.parse("from pkg.trainers import RM as R\nfrom transformers import Trainer\nfrom missing import X\n")
    assert imported_subclasses(tree, str(me), BASES, "tokenizer") == {"R": "transformers.Trainer"}
    assert imported_subclasses(tree, None, BASES, "tokenizer") == {}
