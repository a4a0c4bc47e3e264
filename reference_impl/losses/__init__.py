"""Loss families on per-token values from :mod:`reference_impl.chunking`.

Every function returns ``(loss, metrics)`` with TRL's metric names; inputs are per-token ``[B, T]`` (or per-sequence
``[B]``) tensors, so the same math serves any model that yields log-probs. ``FusedLinear*Loss`` are TRL 1.13
``trl.losses`` drop-ins built on the chunked engine.

One module per family; each module's ``__all__`` is its export list, and this package exports exactly their union
(no second list to keep in step):

* :mod:`.sft` -- NLL, DFT
* :mod:`.preference` -- the DPO family, CPO (AlphaPO), SimPO, ORPO
* :mod:`.unpaired` -- KTO, BCO
* :mod:`.policy` -- the clipped surrogate, the GRPO family, RLOO, A*-PO
* :mod:`.online` -- XPO, Nash-MD (online pairs sampled by the trainer)
* :mod:`.reward` -- Bradley-Terry reward modelling and process (step) reward models
* :mod:`.distillation` -- generalised JSD / KL distillation
* :mod:`.fused_linear` -- the TRL 1.13 ``trl.losses`` adapters
"""

from . import distillation, fused_linear, online, policy, preference, reward, sft, unpaired
from .distillation import *
from .fused_linear import *
from .online import *
from .policy import *
from .preference import *
from .reward import *
from .sft import *
from .unpaired import *

FAMILIES = (sft, preference, unpaired, policy, online, reward, distillation, fused_linear)

__all__ = sorted(name for module in FAMILIES for name in module.__all__)
