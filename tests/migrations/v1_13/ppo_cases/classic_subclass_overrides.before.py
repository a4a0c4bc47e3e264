from trl import PPOTrainer


class ClippedPPOTrainer(PPOTrainer):
    def _step_safety_checker(self, batch_size, queries, responses, scores, masks=None):
        return queries, responses, scores, masks

    def step(self, queries, responses, scores, response_masks=None):
        scores = [s.clamp(-1, 1) for s in scores]
        return super().step(queries, responses, scores, response_masks)

    def compute_rewards(self, scores, logprobs, ref_logprobs, masks):
        return super().compute_rewards(scores, logprobs, ref_logprobs, masks)

    def train(self):
        return None
