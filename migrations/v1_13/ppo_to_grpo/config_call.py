"""ppo-to-grpo: PPOConfig calls (and the dicts spread into them, and parsed configs) mapped field by field.

The table itself is `fields.map_config`; this mixin finds what to hand it (keywords, a visible `**dict`, the loop's
generation settings) and puts the result back with the call's layout."""

from __future__ import annotations

import libcst as cst

from migrations.kinds.cst import code, literal_value, make_kwarg, replace_args
from migrations.v1_13.ppo_to_grpo import fields as F
from migrations.v1_13.ppo_to_grpo.elsewhere import reads_elsewhere

__all__ = ["ConfigCall", "relayout_dict"]


class ConfigCall:
    """Mixed into `ppo_to_grpo.transformer.Transformer`, whose state (`self.an`, `self.era`, `self.grpo`, ...) it
    uses; see that class for the order in which the mixins run."""

    def _is_config(self, recv: str | None) -> bool:
        if recv is None:
            return False
        if any(recv in self.config_params.get(f, {}) for f in getattr(self, "_fn_stack", ())):
            return True
        return recv in self.an.config_vars or ("." in recv and recv.rsplit(".", 1)[1] in self.an.config_holders)

    def _config_call_of(self, recv: str | None) -> cst.Call | None:
        if recv is None:
            return None
        for f in reversed(getattr(self, "_fn_stack", ())):
            if recv in self.config_params.get(f, {}):
                return self.config_params[f][recv]
        if recv in self.an.config_vars:
            return self.an.config_vars[recv]
        if "." in recv:
            return self.an.config_holders.get(recv.rsplit(".", 1)[1])
        return None

    def _config_call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        cls_local = isinstance(original.func, cst.Name) and original.func.value in self.an.config_classes
        own = self.an.config_classes.get(original.func.value, frozenset()) if cls_local else frozenset()  # type: ignore[union-attr]
        star = [a for a in updated.args if a.star]
        entries = [(a.keyword.value, a.value) for a in updated.args if a.keyword is not None and not a.star]
        positional = [a for a in updated.args if a.keyword is None and not a.star]
        if positional:
            self.todo(original, "PPOConfig called with positional arguments: pass them by keyword", "ppo-config-fields")
        visible_dict = bool(star) and all(
            self._dict_for(a) is not None and id(self._dict_for(a)) in self.an.config_dicts for a in star
        )
        if visible_dict and not entries:
            return updated  # the spread dict literal is mapped where it is written (leave_Dict)
        static = not star
        mapped = F.map_config(
            entries,
            era=self.era,
            target=self.target,
            experimental=self.an.experimental,
            static=static,
            extra={k: v.deep_clone() for k, v in self.loop_extra.items()} if static else None,
            own_fields=own,
            old_defaults=self._old_defaults(),
        )
        for msg, anchor in mapped.todos:
            self.todo(original, msg, anchor)
        self._read_elsewhere(original, {k for k, _ in entries} - {k for k, _ in mapped.entries} - own)
        if star and not visible_dict:
            self.todo(
                original,
                f"this config is built from {', '.join(code(a.value) for a in star)} (not visible statically): rename "
                f"its keys for {self.ConfigName} as in the field table (kl_coef/init_kl_coef->beta, cliprange->epsilon, "
                "num_ppo_epochs/ppo_epochs->num_iterations, response_length->max_completion_length, "
                "exp_name->run_name, log_with->report_to) and drop the PPO-only keys; a key it does not set takes "
                f"{self.ConfigName}'s default, not PPO's: {self._splat_defaults()}",
                "ppo-config-sources",
            )
        args = [make_kwarg(k, v) for k, v in mapped.entries]
        args = [*positional, *args, *star]
        self.changed = True
        return replace_args(updated, args)

    def _read_elsewhere(self, original: cst.Call, gone: set[str]) -> None:
        """Mark the config when the project's other files read fields it no longer has (`elsewhere`)."""
        if not gone:
            return
        var = next((v for v, c in self.an.config_vars.items() if c is original), None)
        seen = reads_elsewhere(self.an.source, self.ctx.path, var, gone)
        if seen:
            more = f" (+{len(seen) - 4} more)" if len(seen) > 4 else ""
            self.todo(original, f"{', '.join(seen[:4])}{more} read from this config in other files, but "
                      f"{self.ConfigName} has no such fields (AttributeError now); take the values from where they "
                      "come from", "ppo-config-fields")

    def _splat_defaults(self) -> str:
        """The PPO defaults a config built from a dict relied on, each under its new name (the field table)."""
        fallback = F.CLASSIC_DEFAULTS if self.era == "classic" else F.TRAINER_DEFAULTS
        parts = []
        for name, value in fallback.items():
            new = F.renamed_field(name, self.era, self.target)
            if new is not None and new != name:
                parts.append(f"{new}={value!r} ({name})")
        return ", ".join(parts) + " in PPO; set those the dict does not"

    def _old_defaults(self) -> dict[str, object]:
        """The PPO config defaults that changed between releases, for the releases this file could run on
        (`Attributes._old_default`, from the atlas): classic learning_rate, batch_size, mini_batch_size (0.7.11);
        the trainer-style learning_rate (TrainingArguments' 5e-5 up to 0.28, 3e-6 from 0.29)."""
        names = ("learning_rate", "batch_size", "mini_batch_size") if self.era == "classic" else ("learning_rate",)
        return {name: self._old_default(name) for name in names}

    def _dict_for(self, a: cst.Arg) -> cst.BaseExpression | None:
        if isinstance(a.value, cst.Name):
            vals = self.an.assignments.get(a.value.value, [])
            if len(vals) == 1:
                return vals[0]
        return None

    def leave_Dict(self, original_node: cst.Dict, updated_node: cst.Dict) -> cst.BaseExpression:
        if id(original_node) not in self.an.config_dicts:
            return updated_node
        entries = []
        rest = []
        for el in updated_node.elements:
            k = literal_value(el.key, None) if isinstance(el, cst.DictElement) else None
            if isinstance(k, str):
                entries.append((k, el.value))
            else:
                rest.append(el)
        mapped = F.map_config(entries, era=self.era, target=self.target, experimental=self.an.experimental,
                              static=True, extra={k: v.deep_clone() for k, v in self.loop_extra.items()},
                              old_defaults=self._old_defaults())
        for msg, anchor in mapped.todos:
            self.todo(original_node, msg, anchor)
        els = [cst.DictElement(F.py_literal(k), v) for k, v in mapped.entries] + rest
        self.changed = True
        return relayout_dict(updated_node, els)

    def _parser_todo(self, node: cst.Call) -> None:
        self.todo(
            node,
            f"the config is parsed from the command line / a file as {self.ConfigName}: PPO flags are renamed ("
            + ("--kl_coef -> --beta, --cliprange -> --epsilon, --num_ppo_epochs -> --num_iterations, "
               "--response_length -> --max_completion_length, " if self.grpo else "--response_length -> --max_new_tokens, ")
            + "--exp_name -> --run_name) or gone (--vf_coef, --gamma, --lam, --cliprange_value, --whiten_rewards, "
            "--total_episodes, ...; PPO fields the script reads moved to its own argument dataclass)"
            + ("; GRPO needs --num_generations >= 2 dividing the generation batch" if self.grpo else ""),
            "ppo-config-sources",
        )





def relayout_dict(node: cst.Dict, els: list[cst.BaseDictElement]) -> cst.Dict:
    multiline = any(
        isinstance(e.comma, cst.Comma) and isinstance(e.comma.whitespace_after, cst.ParenthesizedWhitespace)
        for e in node.elements
    )
    if multiline and node.elements:
        sep = next(
            e.comma for e in node.elements
            if isinstance(e.comma, cst.Comma) and isinstance(e.comma.whitespace_after, cst.ParenthesizedWhitespace)
        )
        last = node.elements[-1].comma
        new = [e.with_changes(comma=sep) for e in els[:-1]] + ([els[-1].with_changes(comma=last)] if els else [])
        return node.with_changes(elements=new)
    new = [e.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for e in els[:-1]]
    if els:
        new.append(els[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT))
    return node.with_changes(elements=new)

