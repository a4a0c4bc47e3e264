"""ppo-to-grpo: PPOTrainer(...) -> GRPOTrainer(model=, reward_funcs=, args=, train_dataset=, ...) / OnlineDPOTrainer.

Binds the old positional and keyword arguments of each era, keeps what has a successor, drops what does not with a
TODO, writes a reward function (from the step loop when it was converted, else a stub), and rebuilds a `prompt`
column from PPO-era `input_ids` before the trainer when the dataset needs it."""

from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import PositionProvider

from migrations.base import Finding, todo_text
from migrations.kinds.cst import code, dotted, make_kwarg, replace_args
from migrations.v1_13.ppo_to_grpo.analysis import Trainer
from migrations.v1_13.ppo_to_grpo.loop import build_reward_fn

class TrainerCall:
    """Mixed into `ppo_to_grpo.transformer.Transformer`, whose state (`self.an`, `self.era`, `self.grpo`, ...) it
    uses; see that class for the order in which the mixins run."""

    def _only_feeds_trainer(self, name: str) -> bool:
        """`name = <model factory>(...)` once, as a plain statement, and read only by the trainer call."""
        vals = self.an.assignments.get(name, [])
        stmt = self.an.assign_stmts.get(name)
        if len(vals) != 1 or self.an.name_counts.get(name, 0) != 2 or not isinstance(stmt, cst.SimpleStatementLine):
            return False
        if len(stmt.body) != 1 or any(ln.comment is not None for ln in stmt.leading_lines):
            return False
        f = vals[0].func if isinstance(vals[0], cst.Call) else None
        last = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
        return last in ("from_pretrained", "create_reference_model", "deepcopy")

    def _trainer_call(self, t: Trainer, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if t.local_cls and self.an.trainer_classes.get(original.func.value, False):  # type: ignore[union-attr]
            self.todo(original, "this PPO trainer subclass defines its own __init__: check the arguments passed "
                      f"here against {self.TrainerName}", "ppo-subclasses")
            return updated
        if any(a.star for a in updated.args):
            self.todo(original, f"the trainer is built from *args/**kwargs: pass {self.TrainerName}'s arguments "
                      "(model, reward_funcs, args, train_dataset, processing_class, peft_config)", "ppo-trainer")
            return updated
        if self.era == "classic":
            names = ["config", "model", "ref_model", "tokenizer", "dataset", "optimizer", "data_collator",
                     "num_shared_layers", "lr_scheduler", "training_data_collator"]
        else:
            names = ["args", "processing_class", "model", "ref_model", "reward_model", "train_dataset",
                     "value_model", "data_collator", "eval_dataset", "optimizers", "callbacks", "peft_config"]
        alias = {"config": "args", "tokenizer": "processing_class", "policy": "model", "ref_policy": "ref_model",
                 "dataset": "train_dataset"}
        got: dict[str, cst.BaseExpression] = {}
        i = 0
        for a in updated.args:
            if a.keyword is None:
                if i < len(names):
                    got[alias.get(names[i], names[i])] = a.value
                i += 1
            else:
                got[alias.get(a.keyword.value, a.keyword.value)] = a.value
        out: dict[str, cst.BaseExpression] = {}
        out["model"] = got.pop("model", None) or cst.Name("model")
        if "model" not in [alias.get(k, k) for k in names[: i]] and not any(
            a.keyword is not None and alias.get(a.keyword.value, a.keyword.value) == "model" for a in updated.args
        ):
            self.todo(original, "no policy model was passed to the PPO trainer: pass `model=`", "ppo-trainer")
        ref = got.pop("ref_model", None)
        if not self.grpo and ref is not None and code(ref) != "None":
            out["ref_model"] = ref
        elif ref is not None and code(ref) != "None":
            self.todo(
                original,
                f"{self.TrainerName} takes no ref_model (dropped `{code(ref)}`"
                + (", and its construction" if isinstance(ref, cst.Name) and ref.value in self.remove_stmts.values()
                   else "")
                + "): with beta != 0 and no PEFT it reloads "
                "the reference from model.config._name_or_path, so the policy must be loadable from that path; "
                "with beta=0.0 there is no reference model at all",
                "ppo-ref-model",
            )
        reward = got.pop("reward_model", None)
        tok = got.pop("processing_class", None)
        if reward is not None:
            out["reward_funcs"] = reward
        elif self.era == "classic":
            out["reward_funcs"] = cst.Name(self.reward_name)
            if not self._has_reward_plan(t):
                self.insert_before.setdefault(id(t.stmt), []).append(self._reward_stub())
                self.todo(
                    original,
                    f"write the reward: `{self.reward_name}(prompts, completions, **kwargs)` must return one float per "
                    "completion (it replaces the scores passed to ppo_trainer.step)",
                    "ppo-reward-function",
                )
        else:
            out["reward_funcs"] = cst.Name(self.reward_name)
            self.insert_before.setdefault(id(t.stmt), []).append(self._reward_stub())
            self.todo(original, f"no reward model was passed: write `{self.reward_name}`", "ppo-reward-function")
        out["args"] = got.pop("args", None) or cst.Name("None")
        if code(out["args"]) == "None":
            self.todo(original, f"no config was passed: build a {self.ConfigName}", "ppo-config-fields")
        ds = got.pop("train_dataset", None)
        if ds is not None and code(ds) != "None":
            out["train_dataset"] = self._prompt_column(t, ds, tok, original)
        else:
            self.todo(original, f"{self.TrainerName} needs a train_dataset with a `prompt` column", "ppo-dataset-prompt")
        if "eval_dataset" in got:
            out["eval_dataset"] = got.pop("eval_dataset")
            if code(out["eval_dataset"]) != "None" and tok is not None:
                out["eval_dataset"] = self._prompt_column(t, out["eval_dataset"], tok, original)
        if tok is not None:
            out["processing_class"] = tok
            if reward is not None:
                out["reward_processing_classes"] = tok.deep_clone()  # PPO scored with the policy tokenizer
        value = got.pop("value_model", None)
        if isinstance(value, cst.Name) and value.value in self.remove_stmts.values():
            self.note(original, f"value model `{value.value}` dropped with its construction")
        elif value is not None:
            self.todo(
                original,
                f"the value model `{code(value)}` is no longer used ({'GRPO estimates advantages from groups of completions' if self.grpo else 'Online DPO has no critic'}); "
                "remove its construction",
                "ppo-value-model",
            )
        collator = got.pop("data_collator", None) or got.pop("training_data_collator", None)
        if collator is not None:
            self.todo(original, f"the PPO data_collator `{code(collator)}` was dropped: {self.TrainerName} batches "
                      "prompts itself", "ppo-trainer")
        opt = got.pop("optimizer", None)
        sched = got.pop("lr_scheduler", None)
        if "optimizers" in got:
            out["optimizers"] = got.pop("optimizers")
        elif opt is not None or sched is not None:
            out["optimizers"] = cst.parse_expression(
                f"({code(opt) if opt is not None else 'None'}, {code(sched) if sched is not None else 'None'})"
            )
        if "callbacks" in got:
            out["callbacks"] = got.pop("callbacks")
        if "peft_config" in got:
            out["peft_config"] = got.pop("peft_config")
        nsl = got.pop("num_shared_layers", None)
        if nsl is not None:
            self.todo(original, f"num_shared_layers={code(nsl)} has no successor (the reference shares no layers)",
                      "ppo-ref-model")
        for k, v in got.items():
            self.todo(original, f"PPO trainer argument {k}={code(v)} has no {self.TrainerName} counterpart and was "
                      "dropped", "ppo-trainer")
        self.changed = True
        return replace_args(updated, [make_kwarg(k, v) for k, v in out.items()])

    def _has_reward_plan(self, t: Trainer) -> bool:
        for plan in self.plans.values():
            if plan.trainer == t.var and plan.reward_body is not None:
                fn = build_reward_fn(self.reward_name, plan)
                self.insert_before.setdefault(id(t.stmt), []).append(fn)
                return True
        return False

    def _reward_stub(self) -> cst.BaseStatement:
        return cst.parse_statement(
            f"def {self.reward_name}(prompts, completions, **kwargs):\n"
            '    """Reward for each completion (one float each): port the scoring code of the PPO loop here."""\n'
            '    raise NotImplementedError("trl-compat: port the PPO reward computation into this function")\n'
        )

    def _not_a_tokenized_dataset(self, built: list[cst.BaseExpression]) -> str | None:
        """Why the rebuild from `input_ids` cannot be written for a dataset bound to the values `built` (None: it
        can): every binding is a raw `load_dataset(...)` / `load_from_disk(...)` (or a split of one) that nothing
        maps, so the loop tokenized its text on the fly and there are no ids (linjiax7/PPO); a call of a function the
        module does not define (what it returns is unknown: streambe-medical's `build_ppo_dataset` returns a list);
        a list."""
        if not built:
            return None
        defined = {s.name.value for s in self.src.body if isinstance(s, cst.FunctionDef)}
        raw = ("load_dataset", "load_from_disk")

        def callee(value: cst.BaseExpression) -> str:
            while isinstance(value, cst.Subscript):
                value = value.value
            if not isinstance(value, cst.Call):
                return ""
            f = value.func
            return f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""

        kinds = [callee(v) for v in built]
        if all(k in raw for k in kinds) and ".map(" not in self.src.code:
            return "is loaded raw and never mapped to token ids (the PPO loop tokenized its text)"
        if any(isinstance(v, (cst.List, cst.ListComp)) for v in built):
            return "is a list"
        if all(k and isinstance(v, cst.Call) and isinstance(v.func, cst.Name) and k not in defined and k not in raw
               for k, v in zip(kinds, built)):
            return f"is built by {kinds[-1]}() of another module"
        return None

    def _read_later(self, stmt: cst.CSTNode, name: str) -> bool:
        """Whether code after `stmt` (its last line) reads the variable `name`: the comparison cells after
        `ppo_trainer.train()` in TRL's gpt2-sentiment notebook read `dataset[:]["input_ids"]` (Yancy456/TRL)."""
        if self._wrapper is None:
            return True
        positions = self._wrapper.resolve(PositionProvider)
        if stmt not in positions:
            return True
        end = positions[stmt].end.line
        skip: set[int] = set()
        later: list[cst.Name] = []

        class _Reads(cst.CSTVisitor):
            def visit_Attribute(self, node: cst.Attribute) -> None:
                skip.add(id(node.attr))

            def visit_Arg(self, node: cst.Arg) -> None:
                if node.keyword is not None:
                    skip.add(id(node.keyword))

            def visit_Name(self, node: cst.Name) -> None:
                if node.value == name and id(node) not in skip and node in positions \
                        and positions[node].start.line > end:
                    later.append(node)

        self._wrapper.module.visit(_Reads())
        return bool(later)

    def _prompt_column(self, t: Trainer, ds: cst.BaseExpression, tok: cst.BaseExpression | None,
                       original: cst.Call) -> cst.BaseExpression:
        """PPO datasets carry `input_ids`; GRPO/Online DPO read a `prompt` column: rebuild it before the trainer.
        Returns what the trainer gets: `ds`, or a new name for the rebuilt dataset where code after the trainer
        still reads `ds` (its `input_ids` stay)."""
        if self.tokenize_rewrites:
            return ds  # the visible tokenizing map now yields `prompt`
        name = dotted(ds)
        built = self.an.assignments.get(name or "", [])
        own = [v for v in built if isinstance(v, cst.Call) and isinstance(v.func, cst.Name)
               and v.func.value in self.an.local_classes]
        if own:  # an instance of the file's own class (a torch-style Dataset): no columns to test or map
            cls = own[0].func.value  # type: ignore[union-attr]
            self.todo(original, f"{self.TrainerName} needs a datasets.Dataset with a `prompt` column: `{name}` is "
                      f"a {cls} (a class of this file), with no columns to rebuild it from", "ppo-dataset-prompt")
            return ds
        if name is None or t.stmt is None or tok is None or not isinstance(t.stmt, cst.SimpleStatementLine):
            self.todo(original, f"{self.TrainerName} reads a `prompt` column (text or chat messages); PPO datasets "
                      "held `input_ids`: make sure this dataset has `prompt`", "ppo-dataset-prompt")
            return ds
        unseen = self._not_a_tokenized_dataset(built)
        if unseen is not None:
            self.todo(original, f"{self.TrainerName} reads a `prompt` column (text or chat messages) of a "
                      f"datasets.Dataset; `{name}` {unseen}: give it a `prompt` column yourself", "ppo-dataset-prompt")
            return ds
        # ids built by apply_chat_template hold the template's special tokens: skipping them would lose the chat
        # format (GRPO tokenizes a text prompt as is, adding only BOS), so they are kept and the line is marked
        chat = "apply_chat_template" in self.src.code
        chat_todo = "prompt ids built by apply_chat_template: decoded keeping its special tokens; check for a doubled BOS"
        new = name
        if "." not in name and self._read_later(t.stmt, name):  # the code after the trainer reads its input_ids
            new = f"{name}_prompts"
            while re.search(rf"\b{re.escape(new)}\b", self.src.code):
                new += "_"
            first = cst.parse_statement(f"{new} = {name}\n")
        decode = cst.parse_statement(
            f'if "prompt" not in {new}.column_names:\n'
            f"    {new} = {new}.with_format(None).map(\n"
            f'        lambda example: {{"prompt": {code(tok)}.decode(example["input_ids"], '
            f'skip_special_tokens={not chat})}},\n'
            f'        remove_columns=[c for c in ("input_ids", "attention_mask") if c in {new}.column_names],\n'
            "    )\n"
        )
        lines = [cst.EmptyLine(comment=cst.Comment(
            "# trl-compat: GRPO and Online DPO read text prompts; rebuild them from the PPO-era input_ids"))]
        if chat:  # marked at the inserted line itself (reported at the trainer call it precedes)
            lines.append(cst.EmptyLine(comment=cst.Comment(todo_text(chat_todo, "ppo-dataset-prompt", self.rule.id))))
            line, col = self.position(original)
            self.ctx.report(Finding(self.rule.id, chat_todo, line, col, "ppo-dataset-prompt", "manual", False))
        if new == name:
            decode = decode.with_changes(leading_lines=lines)
        else:
            renamed = cst.EmptyLine(comment=cst.Comment(
                f"# trl-compat: code after the trainer reads `{name}` (its input_ids): the prompts go to `{new}`"))
            self.insert_before.setdefault(id(t.stmt), []).append(first.with_changes(leading_lines=[lines[0], renamed]))
            decode = decode.with_changes(leading_lines=lines[1:])
        self.insert_before.setdefault(id(t.stmt), []).append(decode)
        return cst.Name(new) if new != name else ds

