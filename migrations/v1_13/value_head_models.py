"""value-head-models: TRL's value-head wrappers (deleted in 1.13) -> plain transformers models.

`AutoModelForCausalLMWithValueHead` / `AutoModelForSeq2SeqLMWithValueHead` / `PreTrainedModelWrapper` lived in
`trl` / `trl.models` (v0.2-v0.28) and `trl.experimental.ppo(.modeling_value_head)` (v0.27-1.12). GRPO and Online DPO
train a plain causal LM, so:

* `AutoModelForCausalLMWithValueHead.from_pretrained(x, **kw)` -> `AutoModelForCausalLM.from_pretrained(x, **kw)`;
  the value-head kwargs (`summary_dropout_prob`, `v_head_*`) are dropped; `peft_config=p` becomes
  `get_peft_model(<model>, p)` (what the wrapper did); `reward_adapter*` / `is_trainable` are flagged;
* wrapping an existing model (`...WithValueHead(model)` or `.from_pretrained(model)`) -> the model itself;
* `model.pretrained_model` -> `model`; `model.v_head`, tuple outputs `(logits, loss, value)` and value-head
  checkpoints (`save_pretrained`/`push_to_hub`) are flagged; the seq2seq wrapper is flagged (GRPO needs a causal LM);
* `PreTrainedModelWrapper` -> `transformers.PreTrainedModel` (flagged), `ValueHead` flagged (no successor);
  `SUPPORTED_ARCHITECTURES` read by the file (a copy of the step-loop PPOTrainer checks its model against it) ->
  `compat.value_head.SUPPORTED_ARCHITECTURES`, the tuple of the causal wrapper trl-compat keeps (kept as written and
  marked where the file names the seq2seq wrapper, which that tuple lacks, or builds causal value-head models that
  become plain transformers models); written to: the line is flagged. A file that monkeypatches the wrapper class (`PreTrainedModelWrapper.save_pretrained = f`,
  `setattr(PreTrainedModelWrapper, ...)`, `del`: optimum-habana's Gaudi adapter) keeps it as written, import and
  every use, with a marker: the successor `PreTrainedModel` is the base of every transformers model, and patching it
  would change every model, not TRL's wrappers.

Never remove what is used: a file whose own code reads the value head (calls a value-head model, whose result was
the tuple `(lm_logits, loss, value)`; `.v_head`; `state_dict()` / `load_state_dict(...)` on it), or hands the model
to a function or class the project defines (in the file or a module file of its own: entfane/RLHF's own
`PPOTrainer`, which unpacks `(logits, _, values)`; a `load_valuehead_params(model, path)`), and does not hand it to
a TRL trainer (or a project subclass of one) keeps the wrapper: its import is retargeted to `compat.value_head` (trl-compat's maintained copy
with TRL's forward contract) and every use stays as written. A type check against the wrapper class
(`isinstance(m, AutoModelForCausalLMWithValueHead)`, an annotation) is never retargeted to `AutoModelForCausalLM` (a
factory no model is an instance of): where the wrapper goes, it reads `PreTrainedModel`, with a marker.

A file defining a class that derives from a value-head class (`class Patched(AutoModelForCausalLMWithValueHead)`,
AI-Plans/Model-Diffing; a copy of TRL's own `class AutoModelForCausalLMWithValueHead(PreTrainedModelWrapper)`,
YangRui2015/Generalizable-Reward-Model) builds on the wrapper's API (`pretrained_model`, `v_head`, the
`__init__(pretrained_model)` contract), which neither the `AutoModelForCausalLM` factory nor `PreTrainedModel` has:
it keeps every use as written, the causal wrapper from `compat.value_head`, `PreTrainedModelWrapper` and the seq2seq
wrapper as imported (no successor), and each such class is marked with what it now derives from.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import libcst as cst

from migrations.base import Finding, PythonMigration, RuleContext
from migrations.kinds import grammar
from migrations.kinds.cst import code, dotted, drop_kwarg, kwarg, literal_value, names_in
from migrations.kinds.imports import TrlRef, drop_unused_import, imports_trl
from migrations.kinds.symbols import REMOVED_TRL_MODULES, Replacement, SymbolTransformer
from migrations.kinds.trainer_subclasses import (
    imported_subclasses,
    project_module_file,
    subclasses_in,
)

CAUSAL = "AutoModelForCausalLMWithValueHead"
SEQ2SEQ = "AutoModelForSeq2SeqLMWithValueHead"
WRAPPER = "PreTrainedModelWrapper"
GPT2_VH = "GPT2HeadWithValueModel"  # trl 0.0.x/0.1 (`trl.gpt2`)
ARCH = "SUPPORTED_ARCHITECTURES"
NAMES = frozenset({CAUSAL, SEQ2SEQ, WRAPPER, GPT2_VH, "ValueHead", ARCH})
VHEAD_KWARGS = ("summary_dropout_prob", "v_head_initializer_range", "v_head_init_strategy")
ANCHOR = "value-head-models"  # the rule's id, its default anchor
_UNKNOWN = object()
#: TRL's trainers a value-head model was handed to (the classic and the Trainer-style PPO), by import path
_TRL_TRAINERS = frozenset({f"{m}.{n}" for m in ("trl", "trl.trainer", "trl.trainer.ppo_trainer",
                                                 "trl.trainer.ppov2_trainer", "trl.experimental.ppo")
                           for n in ("PPOTrainer", "PPOv2Trainer")})
MODEL_FACTORIES = ("from_pretrained", "get_peft_model", "from_config", "create_reference_model", "tiny_model")


KEPT_MODULE = "compat.value_head"  # trl-compat's maintained wrapper (same forward contract as TRL's)
VALUE_HEAD_READS = ("v_head", "state_dict", "load_state_dict")


#: a module attribute `trl....SUPPORTED_ARCHITECTURES = (...)`: the list PPOTrainer checked its model against (in
#: `trl.models` until 0.26, re-exported by `trl.trainer.ppo_trainer` until 0.28; atlas), read by no TRL 1.13+ code
_ARCH_WRITE = ("a write to TRL's removed SUPPORTED_ARCHITECTURES: no TRL 1.13+ trainer reads such a list (GRPOTrainer "
               "takes a transformers model or a model id), so delete the line")
_ARCH_READ = ("{module}.SUPPORTED_ARCHITECTURES is gone (TRL 1.13 removed the value-head wrappers it listed); kept "
              "as written because line(s) {lines} read it: replace it with the tuple of model classes this code "
              "should accept (e.g. (compat.value_head.AutoModelForCausalLMWithValueHead,) where the models are "
              "built from compat.value_head)")
_ARCH_MODULE_GONE = "; {module} is gone, so the write raises AttributeError now (inside a try, the except branch runs)"


class _Transformer(SymbolTransformer):
    def __init__(self, rule: PythonMigration, ctx: RuleContext, keep: bool = False) -> None:
        super().__init__(rule, ctx)
        self.keep = keep  # the file reads the value head: retarget the import to compat.value_head, keep the uses
        self.scan_reads: list[str] = []  # (scan pass) what reads the value head, for the report
        self.scan_trainers: list[str] = []  # (scan pass) trainer calls a value-head model is handed to
        self.vh_vars: dict[str, str] = {}  # variable -> wrapper class name
        self.model_vars: set[str] = set()  # variables bound to a model object (not a path)
        self.class_aliases: dict[str, str] = {}  # variable -> value-head class it names
        self.built_by_call: set[str] = set()  # variables assigned the result of a call (e.g. LoraConfig(...))
        self._type_nodes: set[int] = set()  # class references in isinstance / annotations (-> PreTrainedModel)
        self.scan_heads: list[str] = []  # (scan pass) uses of trl's ValueHead in the file's own code (calls, checks)
        self.own_heads = False  # the file uses ValueHead itself: its import goes to compat.value_head
        self.scan_arch_reads: list[int] = []  # (scan pass) lines reading trl's SUPPORTED_ARCHITECTURES
        self.arch_read = False  # the file reads SUPPORTED_ARCHITECTURES: compat.value_head's tuple, or as written
        # the tuple read stays as written (marked): the file names the seq2seq wrapper, which compat.value_head's tuple
        # lacks, or builds causal value-head models this rule turns into plain transformers models
        self.arch_as_written = False
        self.scan_patches: list[str] = []  # (scan pass) attributes of PreTrainedModelWrapper set / deleted
        self.patched_wrapper = False  # the file monkeypatches PreTrainedModelWrapper: it stays, with markers
        self.scan_subclasses: list[tuple[str, str]] = []  # (scan pass) (class, the value-head class it derives from)
        self.kept_bases: frozenset[str] = frozenset()  # wrapper classes the file derives from and keeps as written
        self.mark_subclasses = False  # mark each class deriving from a value-head class (the file keeps them)
        self.source_tree: ast.Module | None = None  # (scan pass) the module read with `ast`
        self.bindings_tree: ast.Module | None = None  # (rewrite pass) the same, for `_bound_otherwise`
        self.trl_subclasses: set[str] = set()  # (scan pass) the project's classes deriving from a TRL trainer

    def replacement(self, ref: TrlRef) -> Replacement | None:
        if self.keep and ref.name in (CAUSAL, "ValueHead") and self._removed_home(ref):
            return Replacement(KEPT_MODULE, ref.name)
        if self.own_heads and ref.name == "ValueHead" and self._removed_home(ref):
            return Replacement(KEPT_MODULE, ref.name)
        if ref.name == GPT2_VH:
            return Replacement("transformers", "GPT2LMHeadModel") if ref.module == "trl.gpt2" else None
        if ref.name not in NAMES or not (ref.module in ("trl", "trl.models") or "value_head" in ref.module
                                         or "modeling_base" in ref.module or ref.module.startswith("trl.experimental.ppo")):
            return None
        if ref.name == ARCH and self.arch_read and not self.arch_as_written:
            return Replacement(KEPT_MODULE, ARCH)  # the tuple of the value-head class trl-compat keeps
        if ref.name in self.kept_bases or ref.name == ARCH and self.arch_read:
            return None
        if ref.name == CAUSAL:
            return Replacement("transformers", "AutoModelForCausalLM")
        if ref.name == SEQ2SEQ:
            return Replacement("transformers", "AutoModelForSeq2SeqLM")
        if ref.name == WRAPPER:
            return None if self.patched_wrapper else Replacement("transformers", "PreTrainedModel")
        return Replacement(None, ref.name)  # ValueHead / SUPPORTED_ARCHITECTURES: import dropped, uses flagged

    @staticmethod
    def _removed_home(ref: TrlRef) -> bool:
        return ref.module in ("trl", "trl.models") or "value_head" in ref.module or "modeling_base" in ref.module \
            or ref.module.startswith("trl.experimental.ppo")

    def owns_module(self, module: str) -> bool:
        return module in ("trl.models.modeling_value_head", "trl.models.modeling_base",
                          "trl.experimental.ppo.modeling_value_head")

    def _vh_class(self, node: cst.BaseExpression) -> str | None:
        alias = dotted(node)
        if alias in self.class_aliases:  # `model_class = AutoModelForCausalLMWithValueHead`
            return self.class_aliases[alias]
        ref = self.trl_ref(node, NAMES)
        if ref is not None and self.replacement(ref) is not None:
            return ref.name
        return None

    # track variables
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            ref = self.trl_ref(target.target, ("SUPPORTED_ARCHITECTURES",)) \
                if isinstance(target.target, cst.Attribute) else None
            if ref is not None:
                gone = _ARCH_MODULE_GONE.format(module=ref.module) if ref.module in REMOVED_TRL_MODULES else ""
                self.todo(node, _ARCH_WRITE + gone, ANCHOR)
        if len(node.targets) != 1:
            return
        var = dotted(node.targets[0].target)
        if var is None:
            return
        v = node.value
        if isinstance(v, cst.Call):
            self.built_by_call.add(var)
        if isinstance(v, (cst.Name, cst.Attribute)):
            cls = self._vh_class(v)
            if cls is not None:
                self.class_aliases[var] = cls
                return
        if isinstance(v, cst.IfExp):
            # `trl_model_class = AutoModelForCausalLMWithValueHead if not args.use_seq2seq else
            # AutoModelForSeq2SeqLMWithValueHead` (TRL 0.7 - 0.11 examples/scripts/ppo.py): its from_pretrained calls
            # pass the wrapper's peft_config= like the classes' own
            arms = {self._vh_class(v.body), self._vh_class(v.orelse)}
            if arms <= {CAUSAL, SEQ2SEQ}:
                self.class_aliases[var] = CAUSAL if CAUSAL in arms else SEQ2SEQ
                if arms == {CAUSAL, SEQ2SEQ} and not self.keep:
                    self._seq2seq(node)
                return
        if isinstance(v, cst.Call):
            f = v.func
            cls = self._vh_class(f.value) if isinstance(f, cst.Attribute) else self._vh_class(f)
            if cls in (CAUSAL, SEQ2SEQ, GPT2_VH):
                self.vh_vars[var] = cls
                self.model_vars.add(var)
                return
            name = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
            if name in MODEL_FACTORIES or name.startswith("AutoModel"):
                self.model_vars.add(var)

    def visit_Call(self, node: cst.Call) -> None:
        """Scan pass (`keep` decided from it): does the file's own code read the value head?"""
        f = node.func
        if isinstance(f, cst.Name) and f.value in self.vh_vars:
            self.scan_reads.append(f"{f.value}(...) (tuple outputs)")
        elif isinstance(f, cst.Attribute) and dotted(f.value) in self.vh_vars and f.attr.value in VALUE_HEAD_READS:
            self.scan_reads.append(code(f))
        if isinstance(f, cst.Name) and f.value in ("setattr", "delattr") and node.args and \
                self.trl_ref(node.args[0].value, (WRAPPER,)) is not None:
            self.scan_patches.append(code(node))
        name = dotted(f) or ""
        if any(dotted(a.value) in self.vh_vars for a in node.args):
            owner = self._project_callable(f)
            if owner == "trainer" or owner is None and name.rsplit(".", 1)[-1].endswith("Trainer"):
                self.scan_trainers.append(name)
            elif owner == "project":
                # the project's own function or class (entfane/RLHF's own PPOTrainer unpacks `(logits, _, values)`
                # and reads `.v_head`; a `load_valuehead_params(model, path)`): it may read the head, so it stays
                self.scan_reads.append(f"{name}(...) (the project's own code, given the model)")
        if not self.keep and isinstance(f, cst.Name) and f.value == "isinstance" and len(node.args) == 2:
            self._type_check(node.args[1].value)

    def _project_callable(self, func: cst.BaseExpression) -> str | None:
        """`func` is a trainer of TRL's or a project class deriving from one ("trainer"), another callable the
        project defines, in this module or a module file of its own it imports from ("project"), or neither / not
        known (None: a library's, a method, a builtin)."""
        if self.trl_refs(func):
            return "trainer" if (dotted(func) or "").endswith("Trainer") else None
        if not isinstance(func, cst.Name) or self.source_tree is None:
            return None
        for stmt in self.source_tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.name == func.value:
                return "trainer" if func.value in self.trl_subclasses else "project"
            if isinstance(stmt, ast.ImportFrom) and any((a.asname or a.name) == func.value for a in stmt.names):
                if self.ctx.path and project_module_file(self.ctx.path, stmt.module, stmt.level) is not None:
                    return "trainer" if func.value in self.trl_subclasses else "project"
                return None
        return None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        """A class deriving from a value-head class (`class Patched(AutoModelForCausalLMWithValueHead)`, a copy of
        TRL's own `class AutoModelForCausalLMWithValueHead(PreTrainedModelWrapper)`): it builds on the wrapper's API
        (`pretrained_model`, `v_head`, its `__init__(pretrained_model)`), which neither `AutoModelForCausalLM` (a
        factory) nor `PreTrainedModel` has. The scan records it; the rewrite marks it (see `ValueHeadModels`)."""
        for base in node.bases:
            ref = self.trl_ref(base.value, (CAUSAL, SEQ2SEQ, WRAPPER))
            if ref is None or not self._removed_home(ref):
                continue
            self.scan_subclasses.append((node.name.value, ref.name))
            if not self.mark_subclasses or ref.name == WRAPPER and self.patched_wrapper:  # marked as patched
                continue
            if ref.name == CAUSAL:
                self.todo(node, f"{node.name.value} derives from TRL's {CAUSAL} (removed in TRL 1.13): it now "
                          f"derives from {KEPT_MODULE}'s copy (forward, from_pretrained, generate, state_dict, "
                          "v_head, pretrained_model); TRL's private helpers (post_init, _split_kwargs, ...) are not "
                          "kept: check what this class overrides or calls", ANCHOR)
            else:
                self.todo(node, f"{node.name.value} derives from TRL's {ref.name} (removed in TRL 1.13), kept as "
                          "written: no successor has its API (pretrained_model, post_init, _split_kwargs, ...): "
                          "keep a copy of TRL 0.x's trl/models/modeling_base.py (and modeling_value_head.py) in the "
                          f"project, or derive from {KEPT_MODULE}.{CAUSAL}", ANCHOR)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool | None:
        """An import of a wrapper class the file derives from and keeps as written (`kept_bases`), or of the
        SUPPORTED_ARCHITECTURES tuple the file still reads (`arch_read`): marked there too, where `trl-compat check`
        reports the missing name."""
        if not isinstance(node.names, cst.ImportStar) and node.module is not None:
            module = dotted(node.module) or ""
            for alias in node.names:
                name = dotted(alias.name) or ""
                if not self._removed_home(TrlRef(module, name)):
                    continue
                if self.mark_subclasses and name in self.kept_bases:
                    self.todo(node, f"{module}.{name} is gone (TRL 1.13 removed the value-head wrappers); kept "
                              "because a class of this file derives from it: see the marker at that class", ANCHOR)
                elif self.arch_read and name == ARCH and self.arch_as_written:
                    lines = ", ".join(str(n) for n in dict.fromkeys(self.scan_arch_reads))
                    self.todo(node, _ARCH_READ.format(module=module, lines=lines), ANCHOR)
        return super().visit_ImportFrom(node)

    def visit_Name(self, node: cst.Name) -> None:
        """(scan pass) A read of trl's ValueHead (a call, an isinstance check, an alias) or SUPPORTED_ARCHITECTURES
        outside the imports (which this transformer does not enter) and attribute names."""
        if id(node) in self._skip_names:
            return
        ref = self.trl_ref(node, ("ValueHead", ARCH))
        if ref is None or not self._removed_home(ref) or node.value != ref.name:
            return
        if ref.name == ARCH:
            self.scan_arch_reads.append(self.position(node)[0])
        else:
            parent = self.parent(node)
            self.scan_heads.append(code(parent) if isinstance(parent, cst.Call) else node.value)

    def _patch_of_wrapper(self, target: cst.BaseExpression) -> None:
        """(scan pass) `PreTrainedModelWrapper.<attr>` assigned or deleted: the class itself is patched."""
        if isinstance(target, cst.Attribute) and self.trl_ref(target.value, (WRAPPER,)) is not None:
            self.scan_patches.append(code(target))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._patch_of_wrapper(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._patch_of_wrapper(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._patch_of_wrapper(node.target)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if node.attr.value == "v_head" and dotted(node.value) in self.vh_vars:
            self.scan_reads.append(code(node))
        return super().visit_Attribute(node)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        f = original_node.func
        if self.keep:
            if isinstance(f, cst.Attribute) and dotted(f.value) in self.vh_vars and f.attr.value in (
                    "push_to_hub", "compute_reward_score", "add_and_load_reward_modeling_adapter"):
                self.todo(original_node, f"{code(f)}: not in compat.value_head's wrapper; see the guide", ANCHOR)
            return updated_node
        # X.from_pretrained(...)
        if isinstance(f, cst.Attribute) and f.attr.value == "from_pretrained":
            cls = self._vh_class(f.value)
            if cls in (CAUSAL, SEQ2SEQ, GPT2_VH):
                return self._from_pretrained(cls, original_node, updated_node)
        cls = self._vh_class(f)
        if cls in (CAUSAL, SEQ2SEQ) and original_node.args:
            # wrapping an existing model: the wrapper is no longer needed
            self.changed = True
            self.note(original_node, f"{cls}(model) -> model")
            if cls == SEQ2SEQ:
                self._seq2seq(original_node)
            return updated_node.args[0].value
        # calling a value-head model: it returned (logits, loss, value)
        if isinstance(f, cst.Name) and f.value in self.vh_vars:
            self.todo(original_node, f"`{f.value}(...)` returned a tuple (lm_logits, loss, value) from the value-head "
                      "wrapper; a plain model returns a ModelOutput (`.logits`) and no values", ANCHOR)
        if isinstance(f, cst.Attribute) and dotted(f.value) in self.vh_vars:
            if f.attr.value in ("save_pretrained", "push_to_hub"):
                self.todo(original_node, f"{code(f)}: the checkpoint no longer holds value-head (v_head.*) weights; "
                          "GRPO/Online DPO need none", ANCHOR)
            elif f.attr.value in ("compute_reward_score", "add_and_load_reward_modeling_adapter"):
                self.todo(original_node, f"{code(f)} was a value-head wrapper method with no successor: use a "
                          "separate AutoModelForSequenceClassification as reward model", ANCHOR)
        return updated_node

    def _from_pretrained(self, cls: str, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        self.changed = True
        call = updated
        for k in VHEAD_KWARGS:
            if kwarg(call, k) is not None:
                call = drop_kwarg(call, k)
                self.note(original, f"dropped value-head argument {k}")
        first_arg = call.args[0].value if call.args and call.args[0].keyword is None else None
        for k in ("reward_adapter", "reward_adapter_name", "is_trainable"):
            a = kwarg(call, k)
            if a is not None:
                call = drop_kwarg(call, k)
                if k == "is_trainable" and first_arg is not None and dotted(first_arg) in self.model_vars:
                    # TRL 0.x read it only to load an adapter from a path (`PeftModel.from_pretrained(...,
                    # is_trainable=)`): given a model object it did nothing (the Coursera detox lab's `peft_model`)
                    self.note(original, f"is_trainable={code(a.value)} dropped: the wrapper read it only when "
                                        "loading an adapter from a path, and this call passes a model")
                    continue
                self.todo(original, f"{k}={code(a.value)} was a value-head wrapper option with no successor: load "
                          "the reward adapter / trainable PEFT model with peft directly", ANCHOR)
        if cls == SEQ2SEQ:
            self._seq2seq(original)
        first = call.args[0].value if call.args and call.args[0].keyword is None else None
        if first is not None and dotted(first) in self.model_vars:
            # `.from_pretrained(model_object)`: the wrapper wrapped an existing model
            inner: cst.BaseExpression = first
        else:
            inner = call
        peft = kwarg(call, "peft_config")
        if peft is not None:
            prepare = False
            if inner is call:
                inner = drop_kwarg(call, "peft_config")
                prepare = self._kbit_prepared(original, inner)
                if first is not None and not (isinstance(peft.value, cst.Name) and peft.value.value == "None") \
                        and self._may_be_adapter(first):
                    self._trained_adapter(original, first)
            return self._wrap_peft(inner, peft.value, prepare)
        return inner

    def _may_be_adapter(self, source: cst.BaseExpression) -> bool:
        """Whether `source` (what the wrapper loaded) may name a trained PEFT adapter: anything computed (an option,
        a config field: the output folder of a SFT run is the usual input of a PPO run); a string literal only when
        it names a folder beside the file holding `adapter_config.json`, or says adapter / LoRA / PEFT in its text
        (a Hub id such as "gpt2" or "lvwerra/gpt2-imdb" is taken for the model it names)."""
        value = source.evaluated_value if isinstance(source, cst.SimpleString) else None
        if not isinstance(value, str):
            return True
        if re.search(r"adapter|lora|peft", value, re.IGNORECASE):
            return True
        folder = Path(self.ctx.path).parent / value if self.ctx.path else Path(value)
        try:
            return (folder / "adapter_config.json").is_file()
        except (OSError, ValueError):
            return False

    def _trained_adapter(self, original: cst.Call, source: cst.BaseExpression) -> None:
        """TRL's wrapper (0.4 on) looked for `adapter_config.json` in the folder or Hub repo it loaded: there, it
        loaded the base model named in that file plus the trained adapter (`PeftModel.from_pretrained(base, path,
        is_trainable=)`) and ignored `peft_config` with a warning; `get_peft_model` always starts a new adapter.
        Which one `source` names is known only at run time (a SFT adapter folder is the usual input of a PPO run)."""
        self.todo(original, f"if {code(source)} holds a trained PEFT adapter (adapter_config.json, a folder or a Hub "
                  "repo), TRL's wrapper loaded its base model plus that adapter and ignored peft_config; this line "
                  "now starts a new adapter from peft_config: for an adapter, load it with "
                  "PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(<its base>), <path>, "
                  "is_trainable=True)", ANCHOR)

    def _kbit_prepared(self, original: cst.Call, model: cst.Call) -> bool:
        """TRL 0.x's wrapper, given `peft_config` and a model id with a true `load_in_8bit` / `load_in_4bit`, ran
        `peft.prepare_model_for_kbit_training(model)` before `get_peft_model` (0.7.4 - 0.11.4 `modeling_base.py`; it
        read only those keywords, not `quantization_config`), and put the model on this process's device when no
        `device_map` was given. Literal flags: the same call is written; a flag read from an option: marked."""
        flags = [a for a in model.args if a.keyword is not None and a.keyword.value in ("load_in_8bit", "load_in_4bit")]
        values = [literal_value(a.value, _UNKNOWN) for a in flags]
        if any(v is _UNKNOWN for v in values):
            self.todo(original, "TRL's value-head wrapper ran peft.prepare_model_for_kbit_training(model) before "
                      "get_peft_model when load_in_8bit / load_in_4bit was true: do the same where it is", ANCHOR)
            return False
        if not any(values):
            return False
        if kwarg(model, "device_map") is None:
            self.todo(original, "TRL's value-head wrapper put a k-bit model on this process's device when no "
                      "device_map was given (0.4 - 0.7: Accelerator().process_index; 0.8+: the local process "
                      "index): pass device_map={\"\": <that device>}", ANCHOR)
        self.note(original, "k-bit model with peft_config: prepare_model_for_kbit_training(...) before get_peft_model, "
                            "as TRL's value-head wrapper did")
        return True

    def _wrap_peft(self, model: cst.BaseExpression, peft: cst.BaseExpression,
                   prepare: bool = False) -> cst.BaseExpression:
        """What `from_pretrained(..., peft_config=p)` did: `get_peft_model(model, p)` when p is not None, after
        `prepare_model_for_kbit_training(model)` for a k-bit model (`prepare`, see `_kbit_prepared`)."""
        if isinstance(peft, cst.Name) and peft.value == "None":
            return model

        def wrap(p: cst.BaseExpression, m: cst.BaseExpression) -> cst.Call:
            if prepare:
                m = cst.Call(func=cst.Name("prepare_model_for_kbit_training"), args=[cst.Arg(m.deep_clone())])
            return cst.Call(func=cst.Name("get_peft_model"), args=[
                cst.Arg(m, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), cst.Arg(p)])

        if prepare:
            self.needed_imports.append(("peft", "prepare_model_for_kbit_training"))
        self.needed_imports.append(("peft", "get_peft_model"))
        sp = cst.SimpleWhitespace(" ")
        if isinstance(peft, cst.IfExp) and code(peft.orelse).strip() == "None":
            # `peft_config=cfg if use_peft else None`
            return cst.IfExp(test=peft.test, body=wrap(peft.body, model), orelse=model.deep_clone(),
                             whitespace_before_if=sp, whitespace_after_if=sp, whitespace_before_else=sp,
                             whitespace_after_else=sp)
        if isinstance(peft, (cst.Name, cst.Attribute)) and (dotted(peft) not in self.built_by_call
                                                            or self._bound_otherwise(dotted(peft) or "")):
            test = cst.parse_expression(f"{code(peft)} is not None")
            return cst.IfExp(test=test, body=wrap(peft, model), orelse=model.deep_clone(),
                             whitespace_before_if=sp, whitespace_after_if=sp, whitespace_before_else=sp,
                             whitespace_after_else=sp)
        return wrap(peft, model)

    def _bound_otherwise(self, var: str) -> bool:
        """`var` (a config built by a call somewhere) is also bound to something else in the file, or is a parameter:
        `peft_config = LoraConfig(...)` in one branch and `peft_config = None` in the other (chansmi/collaborative-
        stegosystem, `use_peft` False by default), so the wrapper's `if peft_config is not None` stays."""
        if self.bindings_tree is None:
            return True
        for node in ast.walk(self.bindings_tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and not isinstance(node.value, ast.Call):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(ast.unparse(t) == var for t in targets):
                    return True
            elif isinstance(node, ast.arg) and node.arg == var:
                return True
        return False

    def _seq2seq(self, node: cst.CSTNode) -> None:
        self.todo(node, "seq2seq value-head model: GRPOTrainer and OnlineDPOTrainer train causal LMs only; switch to a "
                  "decoder-only model (AutoModelForCausalLM)", "value-head-seq2seq")

    def _type_check(self, node: cst.BaseExpression, annotation: bool = False) -> None:
        """`isinstance(m, <wrapper>)` / an annotation: the class becomes PreTrainedModel, never the factory. The
        isinstance check is marked (it is now true of any model); an annotation, which no code of the file runs, is
        reported only."""
        targets = node.elements if isinstance(node, cst.Tuple) else [node]
        for t in targets:
            value = t.value if isinstance(t, cst.Element) else t
            if isinstance(value, cst.SimpleString) and annotation:
                self._string_annotation(value)
                continue
            if self._vh_class(value) in (CAUSAL, SEQ2SEQ) and dotted(value) not in self.class_aliases:
                self._type_nodes.add(id(value))
                if annotation:
                    self.note(value, f"annotation {self._vh_class(value)} -> PreTrainedModel (the class of the "
                              "plain transformers models this file now builds)")
                else:
                    self.todo(value, f"type check on {self._vh_class(value)}: now PreTrainedModel, true for any "
                              "plain model; check what the branch meant", ANCHOR)

    def _string_annotation(self, node: cst.SimpleString) -> None:
        """`m: "AutoModelForCausalLMWithValueHead"`: the string names the wrapper class; it reads PreTrainedModel."""
        names = {ref.name for ref in self.trl_refs(node) if ref.name in (CAUSAL, SEQ2SEQ)}
        if names:
            self._type_nodes.add(id(node))
            self.note(node, f"annotation \"{'/'.join(sorted(names))}\" -> \"PreTrainedModel\" (the class of the "
                      "plain transformers models this file now builds)")

    def leave_SimpleString(self, original_node: cst.SimpleString, updated_node: cst.SimpleString) -> cst.BaseExpression:
        if not self._type_target(original_node):
            return super().leave_SimpleString(original_node, updated_node)
        value = updated_node.value
        for name in (CAUSAL, SEQ2SEQ):
            value = re.sub(rf"(?<![\w.]){name}\b", "PreTrainedModel", value)
        self.changed = True
        self.needed_imports.append(("transformers", "PreTrainedModel"))
        return updated_node.with_changes(value=value)

    def visit_Annotation(self, node: cst.Annotation) -> None:
        if not self.keep:
            for part in _annotation_parts(node.annotation):  # `Tuple[AutoModelForCausalLMWithValueHead, int]` too
                self._type_check(part, annotation=True)

    def _type_target(self, node: cst.CSTNode) -> bool:
        return id(node) in self._type_nodes

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        if self._type_target(original_node):
            self.changed = True
            self.needed_imports.append(("transformers", "PreTrainedModel"))
            return cst.Name("PreTrainedModel")
        if not self.keep and original_node.attr.value != "from_pretrained" \
                and isinstance(original_node.value, (cst.Name, cst.Attribute)):  # the class, not `Wrapper(model).to`
            cls = self._vh_class(original_node.value)
            if cls in (CAUSAL, SEQ2SEQ):
                # `AutoModelForCausalLMWithValueHead._init_weights`, `.lm_head_namings`: the wrapper class's own
                # members; the transformers auto class the name now reads is a factory with none of them
                self.todo(original_node, f"`{original_node.attr.value}` belongs to TRL's value-head wrapper class; "
                          "the transformers auto class this line now names has none: copy what it did into this "
                          "code", ANCHOR)
        result = super().leave_Attribute(original_node, updated_node)
        if result is not updated_node or self.keep:
            return result
        recv = dotted(original_node.value)
        if recv in self.vh_vars:
            if original_node.attr.value == "pretrained_model":
                self.changed = True
                return updated_node.value
            if original_node.attr.value in ("is_loaded_in_8bit", "is_loaded_in_4bit") and not isinstance(
                    self.parent(original_node), (cst.AssignTarget, cst.AugAssign, cst.Del)):
                # the wrapper's own attribute was `getattr(pretrained_model, "is_loaded_in_8bit", False)` (TRL
                # 0.4-0.11 `PreTrainedModelWrapper.__init__`); transformers' quantizer still sets it on the model
                self.changed = True
                self.note(original_node, f"{recv}.{original_node.attr.value} (a value-head wrapper attribute) -> "
                          "getattr on the model, as the wrapper computed it")
                return cst.parse_expression(f'getattr({code(updated_node.value)}, "{original_node.attr.value}", False)')
            if original_node.attr.value == "v_head":
                self.todo(original_node, f"{recv}.v_head: the value head is gone (GRPO/Online DPO have no critic)",
                          ANCHOR)
        elif original_node.attr.value in ("pretrained_model", "v_head") and recv not in ("self", None) and \
                not self.trl_refs(original_node.value):
            # `trainer.model.pretrained_model`, `self.policy.v_head`: a wrapper attribute on an object this rule
            # cannot follow; in a file that used the wrappers, such a model is a plain transformers model now
            self.todo(original_node, f"{recv}.{original_node.attr.value}: value-head wrapper attribute; the models "
                      "of this file are plain transformers models now", ANCHOR)
        return result

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        if self._type_target(original_node):
            self.changed = True
            self.needed_imports.append(("transformers", "PreTrainedModel"))
            return cst.Name("PreTrainedModel")
        ref = self.trl_ref(original_node, ("ValueHead", "SUPPORTED_ARCHITECTURES", WRAPPER))
        if ref is not None and ref.name == WRAPPER and self.patched_wrapper and id(original_node) not in self._skip_names:
            self.todo(original_node, "this file monkeypatches TRL's PreTrainedModelWrapper (removed in TRL 1.13); its "
                      "successor transformers.PreTrainedModel is every model's base class, patching it would change "
                      "every model: kept as written, decide by hand", ANCHOR)
            return updated_node
        if self.keep:
            return super().leave_Name(original_node, updated_node)
        if ref is not None and id(original_node) not in self._skip_names and self.replacement(ref) is not None \
                and not (self.own_heads and ref.name == "ValueHead") \
                and not (ref.name == ARCH and self.arch_read and not self.arch_as_written):
            if ref.name == WRAPPER:
                self.todo(original_node, "PreTrainedModelWrapper is gone: it now reads transformers.PreTrainedModel; "
                          "wrapper attributes (pretrained_model, v_head, is_peft_model) do not exist", ANCHOR)
            else:
                self.todo(original_node, f"trl's {ref.name} was removed with no successor", ANCHOR)
        return super().leave_Name(original_node, updated_node)


def _annotation_parts(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The class references of an annotation: itself, or the parts of `Tuple[A, B]`, `Optional[A]`, `A | B`."""
    if isinstance(node, cst.Subscript):
        out: list[cst.BaseExpression] = []
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                out.extend(_annotation_parts(element.slice.value))
        return out
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        return [*_annotation_parts(node.left), *_annotation_parts(node.right)]
    if isinstance(node, (cst.Tuple, cst.List)):
        return [p for e in node.elements for p in _annotation_parts(e.value)]
    return [node]


class ValueHeadModels(PythonMigration):
    summary = "AutoModelFor*WithValueHead / PreTrainedModelWrapper -> transformers AutoModelForCausalLM / PreTrainedModel"
    triggers = ("WithValueHead", "PreTrainedModelWrapper", "ValueHead", "SUPPORTED_ARCHITECTURES", "modeling_value_head",
                "HeadWithValueModel")
    order = 20
    requires = ("from trl", "import trl")

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        if not imports_trl(wrapper.module, NAMES, ("trl.models.modeling_value_head", "trl.models.modeling_base", "trl.experimental.ppo.modeling_value_head")):
            return wrapper.module
        scan = _Transformer(self, RuleContext(ctx.options, ctx.path))
        scan.keep = True  # the scan rewrites nothing that matters: only its visit_* bookkeeping is read
        try:
            scan.source_tree = grammar.parse(wrapper.module.code)
        except (SyntaxError, ValueError, RecursionError):
            scan.source_tree = None
        if scan.source_tree is not None:
            imported = imported_subclasses(scan.source_tree, ctx.path, _TRL_TRAINERS, None)
            scan.trl_subclasses = {*imported, *subclasses_in(scan.source_tree, _TRL_TRAINERS, None, imported)}
        wrapper.visit(scan)
        keep = bool(scan.scan_reads) and not scan.scan_trainers and set(scan.vh_vars.values()) == {CAUSAL}
        # a class of the file derives from a value-head class: the file builds on the wrapper's API, so it keeps
        # every use as written (the causal wrapper from compat.value_head, the others as they are), classes marked
        subclassed = {base for _name, base in scan.scan_subclasses}
        transformer = _Transformer(self, ctx, keep=keep or bool(subclassed))
        transformer.kept_bases = frozenset(subclassed - {CAUSAL})
        transformer.mark_subclasses = bool(subclassed)
        transformer.own_heads = bool(scan.scan_heads)
        transformer.bindings_tree = scan.source_tree
        transformer.arch_read = bool(scan.scan_arch_reads)
        names = names_in(wrapper.module)  # in code, not in strings (a model card's example); as this rule leaves them too
        transformer.arch_as_written = bool(names & {SEQ2SEQ, "AutoModelForSeq2SeqLM"}) or not transformer.keep \
            and bool(names & {CAUSAL, "AutoModelForCausalLM"})
        transformer.scan_arch_reads = list(scan.scan_arch_reads)
        transformer.patched_wrapper = bool(scan.scan_patches)
        module = transformer.transform_module(wrapper)
        for factory in ("AutoModelForCausalLM", "AutoModelForSeq2SeqLM"):
            # the wrapper's import now names the factory; where the file only used the class in type checks and
            # annotations (PreTrainedModel now), nothing reads it: the import the rule wrote goes
            if not re.search(rf"\b{factory}\b", wrapper.module.code):
                module = drop_unused_import(module, "transformers", factory)
        if transformer.own_heads and not keep:
            ctx.report(Finding(self.id, f"trl's ValueHead is used here ({', '.join(dict.fromkeys(scan.scan_heads))}"
                               f"): the import now names {KEPT_MODULE}.ValueHead (same head)", 1, 0, self.anchor,
                               "info", True))
        if transformer.arch_read and not transformer.arch_as_written:
            ctx.report(Finding(self.id, f"{ARCH} read here (lines {', '.join(map(str, dict.fromkeys(scan.scan_arch_reads)))}"
                               f"): the import now names {KEPT_MODULE}.{ARCH}, the tuple of the value-head class "
                               "trl-compat keeps (TRL's also held the seq2seq wrapper, which this file does not name; "
                               "a model it receives must be built from compat.value_head)",
                               1, 0, self.anchor, "info", True))
        if keep:
            ctx.report(Finding(self.id, f"value head kept: {', '.join(dict.fromkeys(scan.scan_reads))} read it; the "
                               f"import now names {KEPT_MODULE} (same forward contract)", 1, 0, self.anchor,
                               "info", True))
        return module


MIGRATION = ValueHeadModels()
