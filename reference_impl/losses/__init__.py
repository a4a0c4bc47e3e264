"""Loss families on per-token values from :mod:`reference_impl.chunking`.

Every function returns ``(loss, metrics)`` with TRL's metric names; inputs are per-token ``[B, T]`` (or per-sequence
``[B]``) tensors, so the same math serves any model that yields log-probs. ``FusedLinear*Loss`` are TRL 1.13
``trl.losses`` drop-ins built on the chunked engine.
"""

from .distillation import distillation_loss, generalized_jsd_loss, jsd_with_hard_loss
from .fused_linear import FusedLinearDPOLoss, FusedLinearGRPOLoss, FusedLinearJSDLoss, FusedLinearKTOLoss
from .policy import GRPO_LOSS_TYPES, grpo_loss, off_policy_mask, rloo_advantages, rloo_loss, vespo_gamma_weights
from .preference import (
    DPO_LOSS_TYPES,
    F_DIVERGENCE_TYPES,
    cpo_loss,
    dpo_loss,
    orpo_loss,
    sequence_logps,
    simpo_loss,
    wpo_weights,
)
from .reward import reward_loss
from .sft import dft_loss, nll_loss
from .unpaired import KTO_LOSS_TYPES, RunningMoments, bco_loss, kto_loss, udm_density_ratio_weights

__all__ = [
    "DPO_LOSS_TYPES",
    "F_DIVERGENCE_TYPES",
    "GRPO_LOSS_TYPES",
    "KTO_LOSS_TYPES",
    "FusedLinearDPOLoss",
    "FusedLinearGRPOLoss",
    "FusedLinearJSDLoss",
    "FusedLinearKTOLoss",
    "RunningMoments",
    "bco_loss",
    "cpo_loss",
    "dft_loss",
    "distillation_loss",
    "dpo_loss",
    "generalized_jsd_loss",
    "grpo_loss",
    "jsd_with_hard_loss",
    "kto_loss",
    "nll_loss",
    "off_policy_mask",
    "orpo_loss",
    "reward_loss",
    "rloo_advantages",
    "rloo_loss",
    "sequence_logps",
    "simpo_loss",
    "udm_density_ratio_weights",
    "vespo_gamma_weights",
    "wpo_weights",
]
