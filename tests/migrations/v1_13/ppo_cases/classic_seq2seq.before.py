from trl import AutoModelForSeq2SeqLMWithValueHead

model = AutoModelForSeq2SeqLMWithValueHead.from_pretrained("t5-small")
