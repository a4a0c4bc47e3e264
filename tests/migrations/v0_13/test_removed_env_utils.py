"""`removed-env-utils`: before/after and no-op cases, the atlas facts, and the check of the rewrite."""

from __future__ import annotations

import pytest

from migrations.atlas import Atlas
from migrations.v0_13.removed_env_utils import MIGRATION as RULE
from tests.migrations._driver import assert_check_passes, check, noop, run


def test_facts():
    atlas = Atlas.load("trl")
    assert atlas.has("0.12.2", "trl.env_utils.strtobool") and atlas.has("0.9.6", "trl.env_utils.strtobool")
    assert not atlas.has("0.13.0", "trl.env_utils.strtobool") and not atlas.has("1.16.0", "trl.env_utils")


@pytest.mark.parametrize("target", ["1.13.0", "1.16.0"])
def test_moves_to_compat(target):
    """controllable-summarization's DPO scripts: `from trl.env_utils import strtobool` for a yes/no flag."""
    check(RULE, """\
        import os
        from trl.env_utils import strtobool

        debug = strtobool(os.environ.get("DEBUG", "no"))
        """, """\
        import os
        from compat.trl import strtobool

        debug = strtobool(os.environ.get("DEBUG", "no"))
        """, target=target)
    check(RULE, "import trl.env_utils\n\nflag = trl.env_utils.strtobool(x)\n",
          "import compat.trl\n\nflag = compat.trl.strtobool(x)\n")


def test_noop():
    noop(RULE, "from distutils.util import strtobool\nprint(strtobool('yes'))\n")  # not TRL's
    noop(RULE, "def strtobool(v):\n    return v == 'yes'\n\nimport trl\nprint(strtobool('env_utils'))\n")
    noop(RULE, 'import trl\nprint("from trl.env_utils import strtobool")\n')  # a string


def test_the_check_accepts_the_rewrite(tmp_path):
    assert_check_passes(tmp_path, "from compat.trl import strtobool\n\nflag = strtobool('on')\n")


def test_another_name_of_the_gone_module_is_marked():
    out, findings = run(RULE, "from trl.env_utils import strtobool, other\n\nother(strtobool(x))\n")
    assert "TODO(trl-compat): trl.env_utils was removed in TRL 0.13" in out and findings
