import trl
import trl.core

trl.set_seed(1)
resp = trl.core.respond_to_batch(model, queries, txt_len=8)  # noqa: F821
cfg = trl.PPOConfig(batch_size=4, mini_batch_size=4)
