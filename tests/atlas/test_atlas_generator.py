"""The generator end to end on a tiny synthetic package: two fake wheels in a cache folder, no network."""

from __future__ import annotations

import gzip
import json
import zipfile

from migrations.atlas import Atlas, Event
from migrations.atlas.generate import main

V1 = {
    "toy/__init__.py": '''
from typing import TYPE_CHECKING
from .import_utils import _LazyModule
_import_structure = {"trainer": ["OldTrainer", "NewConfig"], "utils": ["helper"]}
try:
    import extra
except ImportError:
    pass
else:
    _import_structure["trainer"].extend(["OptionalThing"])
if TYPE_CHECKING:
    from .trainer import OldTrainer
else:
    import sys
    sys.modules[__name__] = _LazyModule(__name__, globals()["__file__"], _import_structure)
''',
    "toy/import_utils.py": "class _LazyModule:\n    pass\n",
    "toy/trainer/__init__.py": "from .core import *\nfrom .config import NewConfig\n",
    "toy/trainer/core.py": '''
__all__ = ["OldTrainer"]
from transformers.utils.deprecation import deprecate_kwarg
class _Base:
    def __init__(self, model, args=None, *, seed: int = 0, **kwargs):
        self.x = kwargs.pop("legacy", None)
        super().__init__(**kwargs)
class OldTrainer(_Base):
    @deprecate_kwarg("tokenizer", "2.0", "processing_class")
    def __init__(self, model, processing_class=None, *args, **kwargs):
        pass
class Hidden:
    pass
''',
    "toy/trainer/config.py": '''
from dataclasses import dataclass, field
from transformers import TrainingArguments
@dataclass
class NewConfig(TrainingArguments):
    beta: float = 0.1
    tags: list = field(default_factory=list)
    internal: int = field(default=3, init=False)
''',
    "toy/utils.py": "def helper(a, /, b, *c, d, **e):\n    pass\nCONST = 1\n",
}

V2 = dict(V1)
V2["toy/__init__.py"] = (V1["toy/__init__.py"].replace('"OldTrainer", ', "")
                         .replace("from .trainer import OldTrainer", "pass"))
V2["toy/experimental/__init__.py"] = "from ..trainer.core import OldTrainer\n"


def _wheel(folder, version, files):
    path = folder / f"toy-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
        z.writestr(f"toy-{version}.dist-info/METADATA",
                   f"Name: toy\nVersion: {version}\nRequires-Dist: transformers>=4.56.2\n")


def test_generator_on_a_synthetic_package(tmp_path):
    _wheel(tmp_path, "1.0.0", V1)
    _wheel(tmp_path, "1.1.0", V2)
    out = tmp_path / "toy.json.gz"
    assert main(["toy", "--versions", "1.1.0", "1.0.0", "--cache", str(tmp_path), "--out", str(out)]) == 0
    atlas = Atlas(json.load(gzip.open(out)))
    assert atlas.releases() == ["1.0.0", "1.1.0"]
    top = atlas.exports("1.0.0", "toy")
    assert top["OldTrainer"] == ("import", "toy.trainer.OldTrainer")  # TYPE_CHECKING import
    assert top["NewConfig"] == ("lazy", "toy.trainer.NewConfig")
    assert top["OptionalThing"] == ("lazy", "toy.trainer.OptionalThing")  # optional-dependency block
    assert "_LazyModule" not in top and "_LazyModule" in atlas.exports("1.0.0", "toy.import_utils", private=True)
    # star import through __all__ only
    assert atlas.exports("1.0.0", "toy.trainer")["OldTrainer"] == ("import", "toy.trainer.core.OldTrainer")
    assert "Hidden" not in atlas.exports("1.0.0", "toy.trainer")
    assert atlas.resolve("1.0.0", "toy.OldTrainer").qualname == "toy.trainer.core.OldTrainer"
    assert atlas.resolve("1.0.0", "toy.OptionalThing") is None  # listed, but nothing defines it

    sig = atlas.signature("1.0.0", "toy.OldTrainer")
    assert [(p.name, p.kind) for p in sig.params] == [("model", "pk"), ("processing_class", "pk"), ("args", "va"),
                                                      ("kwargs", "vk")]
    assert sig.renamed == (("tokenizer", "processing_class"),)
    base = atlas.signature("1.0.0", "toy.trainer.core._Base")
    assert base.param("seed").default == "0" and base.param("seed").annotation == "int"
    assert base.kwargs_keys == ("legacy",) and base.kwargs_forward == ("super().__init__",)
    helper = atlas.signature("1.0.0", "toy.utils.helper")
    assert [p.kind for p in helper.params] == ["po", "pk", "va", "ko", "vk"]

    fields = atlas.config_fields("1.0.0", "toy.NewConfig")
    assert list(fields)[-3:] == ["beta", "tags", "internal"]
    assert fields["tags"].factory and fields["tags"].default == "list" and not fields["internal"].init
    assert atlas.class_info("1.0.0", "toy.NewConfig")["bases"] == ["transformers.TrainingArguments"]
    # the external base's fields come from the committed transformers atlas
    assert fields["output_dir"].origin == "transformers.training_args.TrainingArguments"

    assert not atlas.has("1.1.0", "toy.OldTrainer")
    assert atlas.history("toy.OldTrainer") == [Event("added", "1.0.0"),
                                               Event("moved", "1.1.0", ("toy.experimental.OldTrainer",
                                                                        "toy.trainer.OldTrainer",
                                                                        "toy.trainer.core.OldTrainer"))]
    assert atlas.history("toy.experimental") == [Event("added", "1.1.0")]
    assert atlas.history("toy.OldTrainer", keyword="tokenizer") == [Event("renamed", "1.0.0", ("processing_class",)),
                                                                 Event("removed", "1.1.0", (),
                                                                       "toy.OldTrainer itself is gone")]
    # deterministic output: the same input gives the same bytes
    again = tmp_path / "again.json.gz"
    main(["toy", "--versions", "1.0.0", "1.1.0", "--cache", str(tmp_path), "--out", str(again)])
    assert again.read_bytes() == out.read_bytes()


def test_a_dataclass_with_a_base_no_atlas_describes_accepts_any_keyword(tmp_path):
    files = {"toy/__init__.py": "",
             "toy/cfg.py": "from dataclasses import dataclass\nfrom peftish import LoraLike\n"
                           "@dataclass\nclass MyLora(LoraLike):\n    extra: int = 1\n"
                           "@dataclass\nclass Plain:\n    a: int = 1\n"}
    _wheel(tmp_path, "1.0.0", files)
    out = tmp_path / "toy.json.gz"
    assert main(["toy", "--versions", "1.0.0", "--cache", str(tmp_path), "--out", str(out)]) == 0
    atlas = Atlas(json.load(gzip.open(out)))
    assert atlas.signature("1.0.0", "toy.cfg.MyLora").external_base == "peftish.LoraLike"
    assert atlas.accepts("1.0.0", "toy.cfg.MyLora", "r") == "opaque"  # LoraLike's fields are unknown
    assert atlas.accepts("1.0.0", "toy.cfg.Plain", "a") == "parameter"
    assert atlas.accepts("1.0.0", "toy.cfg.Plain", "b") is None


def test_three_depths_full_names_and_listed(tmp_path):
    """A big package read at three depths: full, `__all__` only (a package's __init__ still in full), existence."""
    files = {
        "toy/__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .models import *\n",
        "toy/models/__init__.py": "from .big import *\nfrom .small import *\n",
        "toy/models/big/__init__.py": "from .modeling_big import *\n",
        "toy/models/big/modeling_big.py": "import torch\nclass BigModel:\n    def __init__(self, a):\n        pass\n"
                                          "__all__ = [\n    'BigModel',\n]\n",
        "toy/models/small/__init__.py": "from .modeling_small import *\nfrom .tokenization_small import *\n",
        "toy/models/small/modeling_small.py": "class SmallModel:\n    pass\nclass _Hidden:\n    pass\n"
                                              "__all__ = ['SmallModel']\n",
        "toy/models/small/tokenization_small.py": "class SmallTokenizer:\n    pass\n",  # no __all__
        "toy/utils/helpers.py": "def helper():\n    pass\n",
    }
    _wheel(tmp_path, "1.0.0", files)
    out = tmp_path / "toy.json.gz"
    assert main(["toy", "--versions", "1.0.0", "--cache", str(tmp_path), "--out", str(out),
                 "--include", "toy,toy.models,toy.models.big*", "--names", "toy.models.*", "--listed",
                 "--opaque", "toy.models"]) == 0
    atlas = Atlas(json.load(gzip.open(out)))
    assert atlas.coverage()["names"] == ["toy.models.*"]
    # full depth: the chain resolves to the class and its constructor
    assert atlas.resolve("1.0.0", "toy.BigModel").qualname == "toy.models.big.modeling_big.BigModel"
    assert atlas.signature("1.0.0", "toy.BigModel").names() == ["a"]
    # names depth: exported, what it is was not read
    assert atlas.exports("1.0.0", "toy")["SmallModel"] == ("listed", None)
    assert atlas.has("1.0.0", "toy.models.small.modeling_small.SmallModel")
    assert atlas.exports("1.0.0", "toy.models.small.modeling_small") == {"SmallModel": ("listed", None)}
    # ... but a module may bind more than its __all__ lists: names there are never said to be missing
    assert atlas.has("1.0.0", "toy.models.small.modeling_small.Nope")
    assert not atlas.knows_names("1.0.0", "toy.models.small.modeling_small")
    assert not atlas.has("1.0.0", "toy.models.small.Nope")  # a package __init__ is read in full
    assert atlas.signature("1.0.0", "toy.SmallModel") is None
    # a module without a literal __all__ at names depth, a listed module and an --opaque one: names unknown
    for module in ("toy.models.small.tokenization_small", "toy.utils.helpers", "toy.models"):
        assert atlas.has_module("1.0.0", module) and not atlas.knows_names("1.0.0", module)
        assert atlas.has("1.0.0", f"{module}.anything")
    assert atlas.knows_names("1.0.0", "toy.models.small")
    assert not atlas.has_module("1.0.0", "toy.nothing")
