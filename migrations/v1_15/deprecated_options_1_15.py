"""Options TRL 1.15 deprecated because the trainers now use a fused LM head that never builds the full logits.

Verified in the 1.15 and 1.16 wheels (`FutureWarning`, removal in v2.0.0, and "expect slower training" meanwhile):
`SFTTrainer(compute_loss_func=...)` ("subclass SFTTrainer and override compute_loss") and
`SFTConfig(label_smoothing_factor=...)` (label smoothing needs the full logits). Neither has a mechanical successor,
so both get a TODO. (`compute_loss_func=dft_loss` is rewritten by `removed-dft-loss`; `use_liger_kernel` and
`loss_type="chunked_nll"` have their own rules.)
"""

from __future__ import annotations

from migrations.kinds.options import OptionChange, OptionMigration, SFT_CONFIGS

_SFT_TRAINERS = frozenset({"trl.SFTTrainer", "trl.trainer.SFTTrainer", "trl.trainer.sft_trainer.SFTTrainer"})


class DeprecatedOptions115(OptionMigration):
    fix_safety = "safe"
    summary = "SFTTrainer(compute_loss_func=), SFTConfig(label_smoothing_factor=) deprecated in 1.15 -> TODO"
    triggers = ("compute_loss_func", "label_smoothing_factor")
    changes = (
        OptionChange(_SFT_TRAINERS, "compute_loss_func", "todo",
                     message="SFTTrainer(compute_loss_func=) is deprecated since TRL 1.15 and forces an extra forward "
                             "pass: subclass SFTTrainer and override compute_loss",
                     skip_values=frozenset({"trl.trainer.sft_trainer.dft_loss", "compat.trl.dft_loss"})),
        OptionChange(SFT_CONFIGS, "label_smoothing_factor", "todo",
                     message="label_smoothing_factor is deprecated in SFTTrainer since TRL 1.15 (it needs the full "
                             "logits, so it disables the fused LM head): drop it or override compute_loss",
                     skip_zero=True),
    )


MIGRATION = DeprecatedOptions115()
