from transformers import AutoModelForSeq2SeqLM

# TODO(trl-compat): seq2seq value-head model: GRPOTrainer and OnlineDPOTrainer train causal LMs only; switch to a decoder-only model (AutoModelForCausalLM) (see MIGRATION.md#value-head-seq2seq)
model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
