# Shared helpers of the alignment scripts (ppo.py, sft.py, dpo.py, orpo.py, reward.py).
#
# Written against trl==0.8.6 (see requirements.txt). What this module exercises, each checked against the 0.8.6 wheel:
#   - trl.setup_chat_format(model, tokenizer, format="chatml", resize_to_multiple_of=None) -> (model, tokenizer)
#     (trl/models/utils.py; exported from `trl`)
#   - trl.DataCollatorForCompletionOnlyLM(response_template, instruction_template=None, *args, mlm=False,
#     ignore_index=-100, **kwargs), tokenizer= passed through to DataCollatorForLanguageModeling (trl/trainer/utils.py)
#   - trl.get_kbit_device_map() (trl/trainer/utils.py; exported from `trl` via "trainer.utils")
#   - trl.RewardTrainer subclass overriding compute_loss(self, model, inputs, return_outputs=False), the signature of
#     trl 0.8.6 RewardTrainer.compute_loss, reading the columns its RewardDataCollatorWithPadding produces
#     (input_ids_chosen, attention_mask_chosen, input_ids_rejected, attention_mask_rejected, optional margin)
import torch
import torch.nn as nn
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

from trl import DataCollatorForCompletionOnlyLM, RewardTrainer, get_kbit_device_map, setup_chat_format

RESPONSE_TEMPLATE = "### Answer:"


def load_causal_lm(model_name, load_in_4bit=False, chat_format=False):
    """Model + tokenizer the way every script here wants them (pad token set, optional 4-bit, optional ChatML)."""
    quantization_config = None
    device_map = None
    if load_in_4bit:
        quantization_config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
        device_map = get_kbit_device_map()
    model = AutoModelForCausalLM.from_pretrained(
        model_name, quantization_config=quantization_config, device_map=device_map
    )
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    if chat_format and tokenizer.chat_template is None:
        model, tokenizer = setup_chat_format(model, tokenizer)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def completion_only_collator(tokenizer):
    """Mask the prompt so the loss only sees what follows RESPONSE_TEMPLATE."""
    return DataCollatorForCompletionOnlyLM(RESPONSE_TEMPLATE, tokenizer=tokenizer)


def format_qa(example):
    return {"text": f"### Question: {example['question']}\n {RESPONSE_TEMPLATE} {example['answer']}"}


def split_hh_prompt(example):
    """Anthropic/hh-rlhf rows are full transcripts: the prompt is everything up to the last Assistant turn."""
    marker = "\n\nAssistant:"
    cut = example["chosen"].rfind(marker) + len(marker)
    return {
        "prompt": example["chosen"][:cut],
        "chosen": example["chosen"][cut:],
        "rejected": example["rejected"][cut:],
    }


class MarginRewardTrainer(RewardTrainer):
    """Pairwise reward loss with a fixed margin, so near-ties still push the scores apart."""

    margin = 0.5

    def compute_loss(self, model, inputs, return_outputs=False):
        rewards_chosen = model(
            input_ids=inputs["input_ids_chosen"], attention_mask=inputs["attention_mask_chosen"], return_dict=True
        )["logits"]
        rewards_rejected = model(
            input_ids=inputs["input_ids_rejected"], attention_mask=inputs["attention_mask_rejected"], return_dict=True
        )["logits"]
        loss = -nn.functional.logsigmoid(rewards_chosen - rewards_rejected - self.margin).mean()
        if return_outputs:
            return loss, {"rewards_chosen": rewards_chosen, "rewards_rejected": rewards_rejected}
        return loss
