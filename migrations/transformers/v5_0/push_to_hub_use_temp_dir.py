"""push-to-hub-use-temp-dir: `model.push_to_hub(repo, use_temp_dir=...)`, a `TypeError` on transformers 5.

`PushToHubMixin.push_to_hub` (models, tokenizers, processors, configs) took `use_temp_dir` up to 4.57 (4.56.2's
`utils/hub.py`: True saves into a temporary folder, False into `./<repo name>`, kept after the upload, None picks the
temporary folder unless that folder exists); 5.x takes keywords only and no `use_temp_dir`, and always saves into a
`tempfile.TemporaryDirectory()` (5.24.0). zy-Liang/llama-transfer-learning passes `use_temp_dir=False` in ten calls.

Applied to every `.push_to_hub(...)` call of a module that imports transformers or peft (the receiver is an object
the rule cannot type; no other library's `push_to_hub` took the keyword either): `use_temp_dir=True` is dropped (what
both 4.56.2 and 5.x do); any other value is marked (5.x no longer leaves the saved copy in `./<repo name>`: call
`save_pretrained(<name>)` yourself where the local copy is used, then drop the keyword).
"""

from __future__ import annotations

import libcst as cst

from migrations.base import MigrationTransformer, PythonMigration
from migrations.kinds.cst import code, drop_kwarg, kwarg


class _Transformer(MigrationTransformer):
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = original_node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "push_to_hub"):
            return updated_node
        arg = kwarg(original_node, "use_temp_dir")
        if arg is None:
            return updated_node
        if isinstance(arg.value, cst.Name) and arg.value.value == "True":
            self.note(original_node, "push_to_hub(use_temp_dir=True) dropped: transformers 5 always uploads from a "
                                     "temporary folder (the keyword is a TypeError there)")
            return drop_kwarg(updated_node, "use_temp_dir")
        self.todo(original_node, f"push_to_hub(use_temp_dir={code(arg.value)}) is a TypeError on transformers 5, "
                                 "which always uploads from a temporary folder: drop it (call save_pretrained(<name>) "
                                 "first where the local copy 4.x kept in ./<repo name> is used)")
        return updated_node


class PushToHubUseTempDir(PythonMigration):
    summary = "push_to_hub(use_temp_dir=) (gone in transformers 5.0): True dropped, other values marked"
    triggers = ("use_temp_dir",)
    requires = ("transformers", "peft")
    transformer = _Transformer


MIGRATION = PushToHubUseTempDir()
