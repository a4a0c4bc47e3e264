"""Mutation check of the loss tests: every coefficient mutation of `reference_impl/losses` must fail a test without TRL.

Each mutant replaces one exact snippet of a loss source (beta doubled, a sign flipped, a clip bound moved, a 0.5
changed, ...) in a temporary copy of the repository and runs `tests/reference_impl/test_losses.py` there, with TRL
made unimportable in the copy. A mutant is *killed* when that run fails. Not part of the normal test run: pytest runs
in this process once per mutant (the project's modules re-imported each time, torch loaded once):

    PYTHONPATH=. python benchmarks/loss_mutants.py            # all mutants
    PYTHONPATH=. python benchmarks/loss_mutants.py --list     # list them
    PYTHONPATH=. python benchmarks/loss_mutants.py -k grpo    # those whose id contains "grpo"

Exit status 0 only when every mutant is killed (and every snippet still exists, so the list cannot rot silently).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOSSES = "reference_impl/losses"

# (id, file under reference_impl/losses, exact snippet, replacement); each snippet must occur exactly once
MUTANTS: list[tuple[str, str, str, str]] = [
    # --- SFT
    ("nll-sign", "sft.py", "loss = _reduce(-logps, mask", "loss = _reduce(logps, mask"),
    ("dft-weight", "sft.py", "-logps * logps.detach().exp()", "-logps * logps.detach().exp() * 0.5"),
    ("sft-accuracy-metric", "sft.py", 'metrics["mean_token_accuracy"] = ((is_top1.detach().float() * m).sum()',
     'metrics["mean_token_accuracy"] = ((is_top1.detach().float() * m).sum() * 0.5'),
    # --- DPO family
    ("dpo-sigmoid-beta-doubled", "preference.py", "per_seq = -F.logsigmoid(beta * delta_score)",
     "per_seq = -F.logsigmoid(2 * beta * delta_score)"),
    ("dpo-hinge-1", "preference.py", "torch.relu(1 - beta * delta_score)", "torch.relu(0.5 - beta * delta_score)"),
    ("dpo-ipo-half", "preference.py", "per_seq = (ipo_delta - 1 / (2 * beta)) ** 2",
     "per_seq = (ipo_delta - 1 / beta) ** 2"),
    ("dpo-exo-eps", "preference.py", "F.logsigmoid(beta * delta_score) - torch.log1p(-eps)",
     "F.logsigmoid(beta * delta_score) - torch.log1p(eps)"),
    ("dpo-nca-0.5", "preference.py", "- 0.5 * F.logsigmoid(-chosen_rewards)", "- 1.0 * F.logsigmoid(-chosen_rewards)"),
    ("dpo-robust-sign", "preference.py", "per_seq = (clean - flipped) / (1 - 2 * label_smoothing)",
     "per_seq = (clean + flipped) / (1 - 2 * label_smoothing)"),
    ("dpo-robust-denominator", "preference.py", "/ (1 - 2 * label_smoothing)", "/ (1 - label_smoothing)"),
    ("dpo-bco-pair-sign", "preference.py", "- F.logsigmoid(-beta * rejected_logratios)",
     "- F.logsigmoid(beta * rejected_logratios)"),
    ("dpo-sppo-0.5", "preference.py", "(chosen_logratios - 0.5 / beta) ** 2", "(chosen_logratios - 1.0 / beta) ** 2"),
    ("dpo-aot-smoothing", "preference.py",
     "per_seq = -F.logsigmoid(beta * d) * (1 - label_smoothing) - F.logsigmoid(-beta * d) * label_smoothing\n"
     "        elif name == \"aot_unpaired\"",
     "per_seq = -F.logsigmoid(beta * d) * (1 - label_smoothing) + F.logsigmoid(-beta * d) * label_smoothing\n"
     "        elif name == \"aot_unpaired\""),
    ("dpo-apo-zero-sign", "preference.py", "+ torch.sigmoid(beta * rejected_logratios)",
     "- torch.sigmoid(beta * rejected_logratios)"),
    ("dpo-apo-down-1", "preference.py", "1 - torch.sigmoid(beta * (chosen_logratios - rejected_logratios))",
     "0.5 - torch.sigmoid(beta * (chosen_logratios - rejected_logratios))"),
    ("dpo-discopop-tau", "preference.py", "modulation = torch.sigmoid(logits / discopop_tau)",
     "modulation = torch.sigmoid(logits * discopop_tau)"),
    ("dpo-sigmoid-norm-beta", "preference.py", "per_seq = -F.logsigmoid(beta * d)\n\n        if use_weighting",
     "per_seq = -F.logsigmoid(2 * beta * d)\n\n        if use_weighting"),
    ("dpo-f-forward-kl", "preference.py", "return 1 - torch.exp(-logratios)", "return 1 - torch.exp(logratios)"),
    ("dpo-f-js-log2", "preference.py", "return math.log(2) + F.logsigmoid(logratios)",
     "return math.log(3) + F.logsigmoid(logratios)"),
    ("dpo-ld-alpha", "preference.py", "+ ld_alpha * (per_token_logps * tail_mask)",
     "+ 0.5 * ld_alpha * (per_token_logps * tail_mask)"),
    ("dpo-wpo-product", "preference.py", "per_seq = per_seq * (w_chosen * w_rejected)", "per_seq = per_seq * w_chosen"),
    ("dpo-reward-metric-beta", "preference.py",
     "metrics = _preference_metrics(beta * chosen_logratios, beta * rejected_logratios",
     "metrics = _preference_metrics(2 * beta * chosen_logratios, beta * rejected_logratios"),
    # --- CPO / SimPO / ORPO
    ("cpo-simpo-gamma", "preference.py", "logits = logits - simpo_gamma / beta", "logits = logits - simpo_gamma"),
    ("cpo-label-smoothing", "preference.py",
     "losses = -F.logsigmoid(beta * logits) * (1 - label_smoothing) - F.logsigmoid(-beta * logits) * label_smoothing",
     "losses = -F.logsigmoid(beta * logits) * (1 - label_smoothing) - F.logsigmoid(beta * logits) * label_smoothing"),
    ("cpo-ipo-half", "preference.py", "losses = (logits - 1 / (2 * beta)) ** 2", "losses = (logits - 1 / beta) ** 2"),
    ("cpo-alpha-nll", "preference.py", "loss = losses.mean() + cpo_alpha * nll_term",
     "loss = losses.mean() + 0.5 * cpo_alpha * nll_term"),
    ("alphapo-shaping", "preference.py", "chosen_r = (1 - torch.exp(chosen_logps).pow(-alpha)) / alpha",
     "chosen_r = (1 - torch.exp(chosen_logps).pow(alpha)) / alpha"),
    ("orpo-beta-sign", "preference.py", "loss = nll - (beta * ratio).mean()", "loss = nll + (beta * ratio).mean()"),
    ("orpo-log-odds", "preference.py", "- (_log1mexp(chosen_logps) - _log1mexp(rejected_logps))",
     "+ (_log1mexp(chosen_logps) - _log1mexp(rejected_logps))"),
    # --- KTO / BCO
    ("kto-kl-sign", "unpaired.py", "1 - torch.sigmoid(beta * (chosen_lr - kl))", "1 - torch.sigmoid(beta * (chosen_lr + kl))"),
    ("kto-kl-clamp", "unpaired.py", ".mean().detach().clamp(min=0)", ".mean().detach()"),
    ("kto-undesirable-weight", "unpaired.py", "undesirable_weight * rejected_losses", "desirable_weight * rejected_losses"),
    ("kto-apo-zero", "unpaired.py", "rejected_losses = torch.sigmoid(beta * rejected_lr)",
     "rejected_losses = 1 - torch.sigmoid(beta * rejected_lr)"),
    ("bco-delta-sign", "unpaired.py", "chosen_losses = -F.logsigmoid(chosen_rewards - delta)",
     "chosen_losses = -F.logsigmoid(chosen_rewards + delta)"),
    ("bco-beta", "unpaired.py", "rewards = beta * (policy_logps - ref_logps", "rewards = 2 * beta * (policy_logps - ref_logps"),
    ("bco-udm-clamp", "unpaired.py", "(prob_desirable / (1 - prob_desirable + 1e-8))",
     "(prob_desirable / (2 - prob_desirable + 1e-8))"),
    ("running-moments-mean", "unpaired.py", "self.mean += (delta * xs_count / tot_count).item()",
     "self.mean += (delta * xs_count / (tot_count + 1)).item()"),
    ("running-moments-std", "unpaired.py", "self.std = (new_var * tot_count / (tot_count - 1))",
     "self.std = (new_var * tot_count / tot_count)"),
    # --- the clipped surrogate and the GRPO family
    ("clip-low-bound", "policy.py", "clipped = torch.clamp(ratio, 1 - epsilon_low, 1 + epsilon_high)",
     "clipped = torch.clamp(ratio, 1 - 2 * epsilon_low, 1 + epsilon_high)"),
    ("clip-high-bound", "policy.py", "clipped = torch.clamp(ratio, 1 - epsilon_low, 1 + epsilon_high)",
     "clipped = torch.clamp(ratio, 1 - epsilon_low, 1 + epsilon_low)"),
    ("clip-min-to-max", "policy.py", "loss = -torch.min(unclipped * advantages, clipped * advantages)",
     "loss = -torch.max(unclipped * advantages, clipped * advantages)"),
    ("clip-delta-cap", "policy.py", "unclipped = ratio if delta is None else torch.clamp(ratio, max=delta)",
     "unclipped = ratio"),
    ("clip-metric-bound", "policy.py", "high_clipped = (unclipped > 1 + epsilon_high) & (advantages > 0)",
     "high_clipped = (unclipped > 1 + epsilon_low) & (advantages > 0)"),
    ("k3-sign", "policy.py", "return torch.exp(d) - d - 1", "return torch.exp(d) + d - 1"),
    ("cispo-bound", "policy.py", "loss = -torch.clamp(ratio, max=epsilon_high).detach()",
     "loss = -torch.clamp(ratio, max=1 + epsilon_high).detach()"),
    ("cispo-detach", "policy.py", "loss = -torch.clamp(ratio, max=epsilon_high).detach()",
     "loss = -torch.clamp(ratio, max=epsilon_high)"),
    ("sapo-4", "policy.py", "torch.sigmoid(tau * (ratio - 1)) * 4 / tau", "torch.sigmoid(tau * (ratio - 1)) * 2 / tau"),
    ("sapo-temperature", "policy.py", "tau = torch.where(advantages > 0, sapo_temperature_pos, sapo_temperature_neg)",
     "tau = torch.where(advantages > 0, sapo_temperature_neg, sapo_temperature_pos)"),
    ("vespo-kernel", "policy.py", "torch.exp(lam + k * log_w - lam * w)", "torch.exp(lam + k * log_w - w)"),
    ("gspo-mean", "policy.py", "return ((log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).unsqueeze(-1)",
     "return (log_ratio * mask).sum(-1).unsqueeze(-1)"),
    ("dpo-f-alpha", "preference.py", "return (torch.exp(torch.clamp(t.float(), max=clamp_max)) - 1.0).to(t.dtype) / (alpha - 1.0)",
     "return (torch.exp(torch.clamp(t.float(), max=clamp_max)) - 1.0).to(t.dtype) / alpha"),
    ("dpo-f-js-sign", "preference.py", "return math.log(2) + F.logsigmoid(logratios)",
     "return math.log(2) + F.logsigmoid(-logratios)"),
    ("kl-beta", "policy.py", "per_token_loss = per_token_loss + beta * per_token_kl",
     "per_token_loss = per_token_loss + 2 * beta * per_token_kl"),
    ("kl-bias-correction", "policy.py", "per_token_kl = per_token_kl * torch.exp(log_iw)", "per_token_kl = per_token_kl"),
    ("grpo-is-ratio", "policy.py", "per_token_loss = per_token_loss * importance_sampling_ratio",
     "per_token_loss = per_token_loss * importance_sampling_ratio.sqrt()"),
    ("grpo-reduction", "policy.py", "loss = ((per_token_loss * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()",
     "loss = ((per_token_loss * mask).sum(-1) / mask.sum().clamp(min=1.0)).mean()"),
    ("dr-grpo-length", "policy.py", "(per_token_loss.size(0) * max_completion_length)",
     "(per_token_loss.size(0) * per_token_loss.size(1))"),
    ("dapo-normaliser", "policy.py", "normalizer = normalizer * gradient_accumulation_steps / steps_per_generation",
     "normalizer = normalizer * gradient_accumulation_steps"),
    ("luspo-reduction", "policy.py", "loss = (per_token_loss * mask).sum(-1).mean()",
     "loss = (per_token_loss * mask).sum(-1).sum()"),
    ("entropy-coef-sign", "policy.py", "loss = loss - entropy_coef * entropy_loss", "loss = loss + entropy_coef * entropy_loss"),
    ("off-policy-mask", "policy.py", "return ((advantages >= 0) | (avg <= threshold))", "return ((advantages >= 0) | (avg >= threshold))"),
    # --- RLOO / A*-PO
    ("rloo-baseline", "policy.py", "advantages = rewards - ((total - grouped) / (counts - 1)).view(-1)",
     "advantages = rewards - ((total - grouped) / counts).view(-1)"),
    ("rloo-kl-sign", "policy.py", "rewards = rewards - beta * (per_token_kl * mask).sum(-1)",
     "rewards = rewards + beta * (per_token_kl * mask).sum(-1)"),
    ("rloo-normalise-eps", "policy.py", "/ (std + 1e-4)", "/ (std + 1e-1)"),
    ("rloo-epsilon-high", "policy.py", "clipped_surrogate(ratio, advantages, epsilon, epsilon_high)",
     "clipped_surrogate(ratio, advantages, epsilon, epsilon)"),
    ("a2po-v-star", "policy.py", "- math.log(rewards.size(-1)))", ")"),
    ("a2po-beta2", "policy.py", "implicit_reward = beta2 * (policy_logps - ref_logps)",
     "implicit_reward = 2 * beta2 * (policy_logps - ref_logps)"),
    # --- reward
    ("reward-margin-sign", "reward.py", "diff = diff - margin", "diff = diff + margin"),
    ("reward-centering", "reward.py", "center_rewards_coefficient * torch.mean((chosen + rejected) ** 2)",
     "center_rewards_coefficient * torch.mean((chosen - rejected) ** 2)"),
    # --- distillation
    ("jsd-mixture-weights", "distillation.py", "torch.stack([student_log_probs + math.log(1 - beta), teacher_log_probs + math.log(beta)])",
     "torch.stack([student_log_probs + math.log(beta), teacher_log_probs + math.log(1 - beta)])"),
    ("jsd-combination", "distillation.py", "jsd = beta * kl_teacher + (1 - beta) * kl_student",
     "jsd = (1 - beta) * kl_teacher + beta * kl_student"),
    ("jsd-forward-kl-direction", "distillation.py",
     "jsd = F.kl_div(student_log_probs, teacher_log_probs, reduction=\"none\", log_target=True)",
     "jsd = F.kl_div(teacher_log_probs, student_log_probs, reduction=\"none\", log_target=True)"),
    ("jsd-hard-weight", "distillation.py", "loss = weight_hard_loss * hard + weight_soft_loss * soft",
     "loss = weight_soft_loss * hard + weight_soft_loss * soft"),
    # --- the TRL 1.13 adapters
    ("fused-dpo-alpha", "fused_linear.py", "loss = self.alpha * nll + pref_loss", "loss = nll + pref_loss"),
    ("fused-kto-kl", "fused_linear.py", "shifted = logratios - kl if kl is not None", "shifted = logratios + kl if kl is not None"),
    ("fused-grpo-luspo", "fused_linear.py", "loss = weighted.sum() / (mask.shape[0] * weighted.shape[1])",
     "loss = weighted.sum() / mask.shape[0]"),
    ("fused-grpo-kl-beta", "fused_linear.py", "per_token_loss = per_token_loss + m.beta * kl",
     "per_token_loss = per_token_loss + 2 * m.beta * kl"),
    ("fused-jsd-soft-weight", "fused_linear.py", "loss = self.weight_hard_loss * hard + self.weight_soft_loss * soft",
     "loss = self.weight_hard_loss * hard + soft"),
]


def _copy_tree(dst: Path) -> None:
    for name in ("reference_impl", "tests", "compat", "migrations"):
        if (ROOT / name).exists():
            shutil.copytree(ROOT / name, dst / name, ignore=shutil.ignore_patterns("__pycache__", "*.png"))
    for name in ("pyproject.toml", "conftest.py"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dst / name)


def _pytest(test: str, tmp_path: Path, *extra: str) -> tuple[int, str]:
    """Run pytest in this process on the copy, with every project module imported afresh (torch stays loaded)."""
    import pytest

    for name in list(sys.modules):
        if name.split(".")[0] in ("reference_impl", "tests", "compat", "migrations", "conftest"):
            del sys.modules[name]
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = pytest.main([test, "-q", "-p", "no:cacheprovider", *extra])
    finally:
        os.chdir(cwd)
    return int(code), out.getvalue()


def run(selected: list[tuple[str, str, str, str]], test: str) -> int:
    survivors, missing = [], []
    with tempfile.TemporaryDirectory(prefix="loss-mutants-") as tmp:
        tmp_path = Path(tmp)
        _copy_tree(tmp_path)
        # TRL is made unimportable in the copy, so a kill can never come from a TRL oracle
        (tmp_path / "trl").mkdir()
        (tmp_path / "trl" / "__init__.py").write_text('raise ImportError("TRL is blocked in the mutation run")\n')
        sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT]
        sys.path.insert(0, str(tmp_path))
        sys.dont_write_bytecode = True
        code, out = _pytest(test, tmp_path)
        if code != 0:
            print(out[-3000:])
            print("the unmutated tests fail (with TRL blocked): fix them first")
            return 2
        import reference_impl.losses

        where = Path(reference_impl.losses.__file__).resolve()
        if not where.is_relative_to(tmp_path.resolve()):
            print(f"reference_impl was imported from {where}, not from the copy in {tmp_path}")
            return 2
        print(f"baseline: {out.strip().splitlines()[-1]} (losses from {where.parent})", flush=True)
        for mid, fname, old, new in selected:
            path = tmp_path / LOSSES / fname
            source = path.read_text()
            if source.count(old) != 1:
                missing.append(f"{mid}: snippet found {source.count(old)} times in {fname}")
                print(f"MISSING  {mid}", flush=True)
                continue
            path.write_text(source.replace(old, new))
            start = time.perf_counter()
            try:
                code, out = _pytest(test, tmp_path, "-x")
            finally:
                path.write_text(source)
            killed = code != 0
            failed = next((ln for ln in out.splitlines() if ln.startswith("FAILED")), "")
            print(f"{'killed  ' if killed else 'SURVIVED'} {mid:28s} {time.perf_counter() - start:5.1f}s {failed}",
                  flush=True)
            if not killed:
                survivors.append(mid)
    total = len(selected)
    print(f"\n{total - len(survivors) - len(missing)}/{total} mutants killed; survivors: {survivors or 'none'}; "
          f"missing snippets: {missing or 'none'}")
    return 0 if not survivors and not missing else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="only mutants whose id contains this")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--test", default="tests/reference_impl/test_losses.py")
    args = parser.parse_args()
    selected = [m for m in MUTANTS if args.k in m[0]]
    if args.list:
        for mid, fname, old, new in selected:
            print(f"{mid:28s} {fname:16s} {old!r} -> {new!r}")
        return 0
    return run(selected, args.test)


if __name__ == "__main__":
    sys.exit(main())
