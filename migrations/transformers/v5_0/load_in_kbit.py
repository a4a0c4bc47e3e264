"""transformers 5.0 removed `from_pretrained(load_in_8bit=, load_in_4bit=)`: -> `quantization_config=BitsAndBytesConfig(...)`.

transformers 4.x (4.56.2 and 4.57.6 wheels, `PreTrainedModel.from_pretrained`) popped `load_in_8bit` / `load_in_4bit`
and, when either was true, built `BitsAndBytesConfig.from_dict({<the call's keywords that BitsAndBytesConfig takes>,
"load_in_4bit": ..., "load_in_8bit": ...})` as the quantization config (a `quantization_config=` beside them was a
`ValueError`), warning that the keywords were deprecated. 5.0 dropped them: they reach the model's `__init__`, a
`TypeError` (run on 5.24.0 by the rule's tests). The PPO era wrote them everywhere (TRL's own stack_llama and
sentiment examples: `AutoModelForCausalLMWithValueHead.from_pretrained(name, load_in_8bit=True, peft_config=...)`).

`<transformers class>.from_pretrained(..., load_in_8bit=True, llm_int8_threshold=6.0)` becomes
`from_pretrained(..., quantization_config=BitsAndBytesConfig(load_in_8bit=True, llm_int8_threshold=6.0))`: the
config 4.x built (BitsAndBytesConfig takes the same keywords on 4.56.2 and 5.x; `from_dict` of a dict is its
constructor). A flag that is not a literal (`load_in_8bit=args.load_in_8bit`) gives
`quantization_config=BitsAndBytesConfig(load_in_8bit=args.load_in_8bit) if args.load_in_8bit else None` (4.x built no
config for a false flag; None is the keyword's default), where the flags can be read twice (names, attributes). A
literal false flag is dropped. Receivers: transformers classes, TRL's value-head wrappers (they forwarded the keywords)
and peft's `AutoPeftModel*` (they forward to transformers); `compat.value_head`'s wrapper takes the flags itself, as
TRL's did. Marked instead: a call that passes
`quantization_config=` too (a 4.x `ValueError`), flags with side effects, `**kwargs` beside them, a
`from_pretrained` of a receiver the rule cannot resolve, and a dict holding the keywords (`model_kwargs =
{"load_in_8bit": True}`) in a module that imports transformers or TRL: if it goes to `from_pretrained`, it needs the
same change. A dict proven to be a model's loading options (`kinds.model_kwargs.model_dicts`: handed only to a
model's `from_pretrained(**...)` or as `model_init_kwargs=`) is rewritten like the call.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider, QualifiedNameProvider, ScopeProvider

from migrations.base import MigrationTransformer, PythonMigration, RuleContext
from migrations.kinds.cst import as_test, dotted, literal_value, make_kwarg, replace_args, string_value
from migrations.kinds.imports import code_words, ensure_imports, imported_names, top_level_imports
from migrations.kinds.model_kwargs import model_dicts, model_loader

FLAGS = ("load_in_8bit", "load_in_4bit")
#: `BitsAndBytesConfig.__init__`'s keywords other than the flags (4.56.2 and 5.24.0 wheels, tested): 4.x moved these
#: from the `from_pretrained` call into the config when a flag was true
BNB_KEYWORDS = frozenset({
    "llm_int8_threshold", "llm_int8_skip_modules", "llm_int8_enable_fp32_cpu_offload", "llm_int8_has_fp16_weight",
    "bnb_4bit_compute_dtype", "bnb_4bit_quant_type", "bnb_4bit_use_double_quant", "bnb_4bit_quant_storage",
})
#: trl-compat's value-head wrapper reads the flags itself as TRL's did (prepare_model_for_kbit_training before a
#: peft_config, this process's device without a device_map) and hands transformers 5 a quantization_config
_READS_FLAGS = "compat.value_head."
_GONE = "transformers 5 removed from_pretrained(load_in_8bit=/load_in_4bit=) (a TypeError now)"
_HELPER = "BitsAndBytesConfig"
_DICT = ("if this dict goes to from_pretrained, give it quantization_config=BitsAndBytesConfig({flag}=...) instead of "
         "{flag}: " + _GONE)
_UNKNOWN = object()


def _repeatable(node: cst.BaseExpression) -> bool:
    """`node` may be evaluated twice with the same result and no side effect: names, attribute chains, literals, and
    comparisons / `and` / `or` / `not` / conditional expressions of those (`self.args.quant == "8bit"`, `True if
    args.int8 else False`)."""
    if isinstance(node, (cst.Name, cst.SimpleString, cst.Integer)) or dotted(node) is not None:
        return True
    if isinstance(node, cst.Comparison):
        return _repeatable(node.left) and all(_repeatable(c.comparator) for c in node.comparisons)
    if isinstance(node, cst.BooleanOperation):
        return _repeatable(node.left) and _repeatable(node.right)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return _repeatable(node.expression)
    if isinstance(node, cst.IfExp):
        return _repeatable(node.test) and _repeatable(node.body) and _repeatable(node.orelse)
    return False


def _flag(arg: cst.Arg) -> object:
    """The flag's literal value (None reads as False, as 4.x's `if load_in_4bit or load_in_8bit` did), else _UNKNOWN."""
    value = literal_value(arg.value, _UNKNOWN)
    return False if value is None else value


class _Transformer(MigrationTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self, rule: PythonMigration, ctx: RuleContext, helper_free: bool) -> None:
        super().__init__(rule, ctx)
        self.dicts: set[int] = set()
        self.helper_free = helper_free
        self.needed = False

    def _receiver(self, func: cst.Attribute) -> bool | None:
        """True: a model class whose from_pretrained took the flags; False: another class, or `compat.value_head`'s
        wrapper (it takes them itself); None: unknown."""
        if any(q.startswith(_READS_FLAGS) for q in imported_names(self, func.value)):
            return False
        return model_loader(self, func)

    def visit_Module(self, node: cst.Module) -> None:
        self.dicts = model_dicts(self, node, frozenset({*FLAGS, *BNB_KEYWORDS, "quantization_config"}))

    def visit_DictElement(self, node: cst.DictElement) -> None:
        if string_value(node.key) in FLAGS and id(self._owner(node)) not in self.dicts:
            self.todo(node, _DICT.format(flag=string_value(node.key)))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        """`kwargs["load_in_8bit"] = True` (haotian-liu/LLaVA's builder.py and its copies), then
        `from_pretrained(**kwargs)`: marked like a dict holding the flag."""
        target = node.target
        if isinstance(target, cst.Subscript) and len(target.slice) == 1 \
                and isinstance(target.slice[0].slice, cst.Index):
            key = string_value(target.slice[0].slice.value)
            if key in FLAGS:
                self.todo(node, _DICT.format(flag=key))

    def _owner(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.get_metadata(ParentNodeProvider, node, None)

    def leave_Dict(self, original_node: cst.Dict, updated_node: cst.Dict) -> cst.BaseExpression:
        """`{"load_in_8bit": True, ...}` proven to be a model's loading options: rewritten as its call would be."""
        if id(original_node) not in self.dicts:
            return updated_node
        items = [e for e in updated_node.elements if isinstance(e, cst.DictElement) and string_value(e.key) in FLAGS]
        if not items:
            return updated_node
        as_args = [make_kwarg(str(string_value(e.key)), e.value) if isinstance(e, cst.DictElement)
                   and string_value(e.key) is not None else cst.Arg(e.value, star="**")  # type: ignore[union-attr]
                   for e in updated_node.elements]
        call = self._rewrite(original_node, cst.Call(cst.Name("dict"), as_args), receiver=True)
        if call is None:
            return updated_node
        quote = '"'
        keys = {string_value(e.key): e.key for e in updated_node.elements if isinstance(e, cst.DictElement)}
        elements = [cst.DictElement(keys.get(a.keyword.value) or  # type: ignore[union-attr]
                                    cst.SimpleString(f"{quote}{a.keyword.value}{quote}"), a.value)  # type: ignore[union-attr]
                    if a.star == "" else cst.StarredDictElement(a.value) for a in call.args]
        # the dict's layout kept: one entry per line stays so, a trailing comma stays (the commas of the entries)
        commas = [e.comma for e in updated_node.elements]
        between = [c for c in commas[:-1] if isinstance(c, cst.Comma)] or \
            [cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))]
        return updated_node.with_changes(elements=[
            e.with_changes(comma=between[min(i, len(between) - 1)]) for i, e in enumerate(elements[:-1])
        ] + [elements[-1].with_changes(comma=commas[-1])])

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        func = original_node.func
        if isinstance(func, cst.Name) and func.value == "dict":
            if id(original_node) in self.dicts:  # `dict(load_in_8bit=True, ...)` proven to be loading options
                return self._rewrite(original_node, updated_node, receiver=True) or updated_node
            for a in original_node.args:
                if a.keyword is not None and a.keyword.value in FLAGS:
                    self.todo(original_node, _DICT.format(flag=a.keyword.value))
                    break
            return updated_node
        if not isinstance(func, cst.Attribute) or func.attr.value != "from_pretrained":
            return updated_node
        receiver = self._receiver(func)
        if receiver is False:
            return updated_node
        return self._rewrite(original_node, updated_node, receiver) or updated_node

    def _rewrite(self, original_node: cst.Call, updated_node: cst.Call, receiver: bool | None) -> cst.Call | None:
        """The call (a model's from_pretrained, or `dict(...)` of its loading options) with the flags turned into
        `quantization_config=`; None when there are none, or marked."""
        flags = [a for a in updated_node.args if a.keyword is not None and a.keyword.value in FLAGS]
        if not flags:
            return None
        why = self._refusal(updated_node, flags, receiver)
        if why is not None:
            self.todo(original_node, f"pass quantization_config=BitsAndBytesConfig(...) for load_in_*bit= by hand "
                                     f"({why}): {_GONE}")
            return None
        live = [a for a in flags if _flag(a) is not False and _flag(a) != 0]
        if not live:  # every flag a literal False: 4.x built no config
            self.note(original_node, "from_pretrained(load_in_8bit=False) dropped: 4.x built no quantization config "
                                     "for a false flag, 5.x takes no such keyword")
            return replace_args(updated_node, [a for a in updated_node.args if a not in flags])
        bnb = [a for a in updated_node.args if a.keyword is not None and a.keyword.value in BNB_KEYWORDS]
        config: cst.BaseExpression = cst.Call(func=cst.Name(_HELPER), args=[
            make_kwarg(a.keyword.value, a.value) for a in [*live, *bnb]])  # type: ignore[union-attr]
        dynamic = [a.value for a in live if _flag(a) is _UNKNOWN]
        if dynamic:
            test = as_test(dynamic[0]) if len(dynamic) == 1 else cst.BooleanOperation(
                as_test(dynamic[0]), cst.Or(), as_test(dynamic[1]))
            config = cst.IfExp(test=test, body=config, orelse=cst.Name("None"))
        kept = [a for a in updated_node.args if a not in flags and a not in bnb]
        position = len([a for a in updated_node.args[:updated_node.args.index(flags[0])] if a in kept])
        new_args = [*kept[:position], make_kwarg("quantization_config", config), *kept[position:]]
        self.needed = True
        self.note(original_node, "from_pretrained(load_in_*bit=) -> quantization_config=BitsAndBytesConfig(...): the "
                                 "config transformers 4.x built from them; 5.x takes no such keyword")
        return replace_args(updated_node, new_args)

    def _refusal(self, call: cst.Call, flags: list[cst.Arg], receiver: bool | None) -> str | None:
        if receiver is None:
            return "the rule cannot tell what this from_pretrained belongs to"
        if not self.helper_free:
            return f"this module binds the name {_HELPER} to something else"
        if any(a.keyword is not None and a.keyword.value == "quantization_config" for a in call.args):
            return "quantization_config= is passed too: 4.x refused both"
        if any(a.star == "**" for a in call.args):
            return "**kwargs may hold the other bitsandbytes keywords 4.x moved into the config"
        for a in flags:
            if _flag(a) is _UNKNOWN and not _repeatable(a.value):
                return f"{a.keyword.value}= is read twice by the rewrite and may have side effects"  # type: ignore[union-attr]
        return None


class LoadInKbit(PythonMigration):
    summary = ("from_pretrained(load_in_8bit=/load_in_4bit=) (removed in transformers 5) -> "
               "quantization_config=BitsAndBytesConfig(...)")
    triggers = FLAGS
    requires = ("transformers", "trl", "peft")

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        # the module's own `BitsAndBytesConfig`, if any, must be transformers' (imported from it)
        text = wrapper.module.code
        helper_free = _HELPER not in code_words(text) or "from transformers import" in text and bool(
            {("transformers", _HELPER), ("transformers.utils.quantization_config", _HELPER)}
            & top_level_imports(wrapper.module))
        t = _Transformer(self, ctx, helper_free)
        module = wrapper.visit(t)
        if t.needed:
            module = ensure_imports(module, [("transformers", _HELPER)])
        return module if t.changed else wrapper.module


MIGRATION = LoadInKbit()
