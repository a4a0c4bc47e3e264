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


def test_import_cycle_through_the_package_each_file_parsed_once(tmp_path, monkeypatch):
    # Tongjilibo/bert4torch's shape: the package `__init__` imports every submodule and each submodule imports from
    # the package; following every import again from each file parsed 16,000 files for one PPO trainer file
    from migrations.kinds import grammar, trainer_subclasses

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    count = 12
    (pkg / "__init__.py").write_text(
        "".join(f"from pkg.m{i} import *\n" for i in range(count)) + "from pkg.trainers import Own\n", encoding="utf-8")
    for i in range(count):
        (pkg / f"m{i}.py").write_text(
            "".join(f"from pkg.m{j} import f{j}\n" for j in range(count) if j != i) + f"def f{i}():\n    pass\n",
            encoding="utf-8")
    (pkg / "trainers.py").write_text(
        "from pkg import m0\nfrom transformers import Trainer\n\nclass Own(Trainer):\n    pass\n", encoding="utf-8")
    parsed: list[str] = []
    real = grammar.parse

    def counting(source, *args, **kwargs):
        parsed.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(grammar, "parse", counting)
    monkeypatch.setattr(trainer_subclasses, "_FILE_SUBCLASSES", {})
    monkeypatch.setattr(trainer_subclasses, "_TREES", {})
    tree = ast.parse("from pkg.trainers import Own\n")
    assert imported_subclasses(tree, str(tmp_path / "train.py"), BASES, "tokenizer") == {"Own": "transformers.Trainer"}
    assert len(parsed) == count + 2  # every module file once: __init__, m0..m11, trainers


def test_a_class_whose_base_comes_back_through_an_import_cycle(tmp_path):
    # a.py defines the Trainer subclass Base and imports Mid from b.py, which derives Mid from a.py's Base: reading
    # a.py first used to cut the cycle at b.py's import of a.py, so Mid (and Top on it) went unseen
    (tmp_path / "a.py").write_text(
        "from transformers import Trainer\nfrom b import Mid\n\nclass Base(Trainer):\n    pass\n\n"
        "class Top(Mid):\n    pass\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("from a import Base\n\nclass Mid(Base):\n    pass\n", encoding="utf-8")
    tree = ast.parse("from a import Top, Base\nfrom b import Mid\n")
    assert imported_subclasses(tree, str(tmp_path / "train.py"), BASES, "tokenizer") == {
        "Top": "transformers.Trainer", "Base": "transformers.Trainer", "Mid": "transformers.Trainer"}
