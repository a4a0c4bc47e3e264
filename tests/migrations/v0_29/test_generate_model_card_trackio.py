"""Before/after and no-op cases for `generate-model-card-trackio`, and the rewritten call against TRL 1.16's own
`generate_model_card` (the installed wheel: the call must bind, and render the card without a Trackio badge)."""

from __future__ import annotations

import inspect

from migrations.v0_29.generate_model_card_trackio import MIGRATION as RULE
from tests.migrations._driver import noop, run


def test_keyword_call_one_per_line():
    out, findings = run(RULE, """\
        from trl.trainer.utils import generate_model_card

        card = generate_model_card(
            base_model=base,
            model_name=name,
            hub_model_id=hub_id,
            dataset_name=data,
            tags=tags,
            wandb_url=wandb_url,
            trainer_name="DPO",
        )
    """)
    assert '    wandb_url=wandb_url,\n    trackio_url=None,\n    trainer_name="DPO",\n)' in out
    assert len(findings) == 1


def test_keyword_call_wandb_last_and_one_line():
    out, _ = run(RULE, """\
        import trl.trainer.utils as tu
        card = tu.generate_model_card(base_model=b, model_name=n, hub_model_id=h, dataset_name=d, tags=t, trainer_name="X", wandb_url=w)
    """)
    assert 'trainer_name="X", wandb_url=w, trackio_url=None)' in out


def test_positional_trainer_name():
    out, _ = run(RULE, """\
        from trl.trainer.utils import generate_model_card
        card = generate_model_card(b, n, h, d, t, w, "SFT", trainer_citation=c)
    """)
    assert 'generate_model_card(b, n, h, d, t, w, None, "SFT", trainer_citation=c)' in out


def test_noops():
    noop(RULE, """\
        from trl.trainer.utils import generate_model_card
        generate_model_card(**kwargs)
        generate_model_card(*args, trainer_name="x")
        generate_model_card(b, n, h, d, t, w, trackio_url=None, trainer_name="x")
    """)
    noop(RULE, """\
        import trl

        def generate_model_card(**kw):  # the project's own function of the same name
            return kw

        generate_model_card(base_model=b, wandb_url=w, trainer_name="x")
        s = "generate_model_card(base_model=b, wandb_url=w)"
    """)


def test_rewritten_call_binds_and_renders_without_badge():
    """The rewrite's output runs on the installed TRL: the call binds to 1.16's signature and renders no Trackio link."""
    from trl.trainer.utils import generate_model_card

    out, _ = run(RULE, """\
        from trl.trainer.utils import generate_model_card
        card = generate_model_card(
            base_model=None, model_name="m", hub_model_id="me/m", dataset_name=None, tags=[], wandb_url=None,
            trainer_name="SFT",
        )
    """)
    assert "trackio_url" in inspect.signature(generate_model_card).parameters
    scope: dict = {}
    exec(compile(out, "<migrated>", "exec"), scope)
    text = str(scope["card"])
    assert "me/m" in text and "trackio" not in text.lower()
