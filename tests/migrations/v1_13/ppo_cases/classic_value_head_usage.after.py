import torch
from transformers import AutoModelForCausalLM
from transformers import AutoModelForCausalLM

base = AutoModelForCausalLM.from_pretrained("gpt2")
model = base
wrapped = base
inner = model
# TODO(trl-compat): model.v_head: the value head is gone (GRPO/Online DPO have no critic) (see MIGRATION.md#value-head-models)
head_weight = model.v_head.summary.weight
# TODO(trl-compat): `model(...)` returned a tuple (lm_logits, loss, value) from the value-head wrapper; a plain model returns a ModelOutput (`.logits`) and no values (see MIGRATION.md#value-head-models)
logits, _, values = model(torch.tensor([[1, 2, 3]]))
# TODO(trl-compat): model.push_to_hub: the checkpoint no longer holds value-head (v_head.*) weights; GRPO/Online DPO need none (see MIGRATION.md#value-head-models)
model.push_to_hub("me/model-with-value-head")
