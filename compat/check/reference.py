"""The constructors of `reference_impl`'s trainers as the static check sees them: read from their source with `ast`.

Where the target TRL has none of a `compat.trl` name's TRL candidates (XPO, Nash-MD, BCO, PRM on TRL 1.14+),
`compat.trl` resolves to `reference_impl`'s class: a call is held against that class's own `__init__`, read here
from trl-compat's installed `reference_impl` source (the same `ast` extractor the atlas uses on the wheels, nothing imported
but `reference_impl.trainers`' export table, which loads no torch). A class whose `__init__` is inherited or takes
`**kwargs` gives None: the check then keeps the signature of the last TRL release that had the name.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

from compat._exports import TRL_CANDIDATES
from compat._shadow import ROOT, own_first
from migrations.atlas import Param, Signature
from migrations.atlas.extract import signature_of

REFERENCE = "reference_impl"


def reference_name(name: str) -> str | None:
    """The `reference_impl` attribute among `compat.trl.NAME`'s candidates, or None."""
    return next((attr for module, attr in TRL_CANDIDATES.get(name, ()) if module == REFERENCE), None)


@lru_cache(maxsize=64)
def reference_signature(name: str) -> Signature | None:
    """The constructor signature of the `reference_impl` class `compat.trl.NAME` falls back to, from its source;
    None when there is none, it has no `__init__` of its own, or that takes `**kwargs`."""
    attr = reference_name(name)
    if attr is None:
        return None
    own_first(REFERENCE)  # trl-compat's own reference_impl, not a repository's folder of that name
    from reference_impl.trainers import EXPORTS

    module = EXPORTS.get(attr)
    path = Path(ROOT) / REFERENCE / "trainers" / f"{module}.py"
    if module is None or not path.is_file():
        return None
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == attr), None)
    init = None if cls is None else next(
        (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if init is None:
        return None
    params = tuple(Param(*p) for p in signature_of(init, method=True).params)
    if any(p.kind == "vk" for p in params):
        return None
    return Signature(params=params, origin=f"{REFERENCE}.trainers.{module}.{attr}")
