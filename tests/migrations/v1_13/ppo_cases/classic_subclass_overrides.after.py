from trl import GRPOTrainer


class ClippedPPOTrainer(GRPOTrainer):
    # TODO(trl-compat): ClippedPPOTrainer._step_safety_checker overrides a PPO... [ppo-to-grpo]
    def _step_safety_checker(self, batch_size, queries, responses, scores, masks=None):
        return queries, responses, scores, masks

    # TODO(trl-compat): ClippedPPOTrainer.step overrides a PPO trainer method that... [ppo-to-grpo]
    def step(self, queries, responses, scores, response_masks=None):
        scores = [s.clamp(-1, 1) for s in scores]
        return super().step(queries, responses, scores, response_masks)

    # TODO(trl-compat): ClippedPPOTrainer.compute_rewards overrides a PPO trainer... [ppo-to-grpo]
    def compute_rewards(self, scores, logprobs, ref_logprobs, masks):
        return super().compute_rewards(scores, logprobs, ref_logprobs, masks)

    # TODO(trl-compat): ClippedPPOTrainer.train now overrides GRPOTrainer.train... [ppo-to-grpo]
    def train(self):
        return None
