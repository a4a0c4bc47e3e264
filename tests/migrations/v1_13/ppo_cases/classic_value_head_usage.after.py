import torch
from transformers import AutoModelForCausalLM
from compat.value_head import AutoModelForCausalLMWithValueHead

base = AutoModelForCausalLM.from_pretrained("gpt2")
model = AutoModelForCausalLMWithValueHead.from_pretrained(base)
wrapped = AutoModelForCausalLMWithValueHead(base)
inner = model.pretrained_model
head_weight = model.v_head.summary.weight
logits, _, values = model(torch.tensor([[1, 2, 3]]))
# TODO(trl-compat): model.push_to_hub: not in compat.value_head's wrapper [value-head-models]
model.push_to_hub("me/model-with-value-head")
