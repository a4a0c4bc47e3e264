from transformers import AutoModelForSeq2SeqLM

# TODO(trl-compat): seq2seq value-head model: GRPOTrainer and... [value-head-models]
model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
