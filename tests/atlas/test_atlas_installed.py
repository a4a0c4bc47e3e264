"""The committed atlas against the TRL installed here: re-extract its files and compare; spot-check at run time."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import inspect
import os

import pytest

from migrations.atlas import Atlas, Param
from migrations.atlas.extract import read_package
from migrations.atlas.generate import Release, encode

pytest.importorskip("packaging")


def _installed(package: str) -> tuple[str, dict[str, bytes]]:
    dist = importlib.metadata.distribution(package)
    files = {}
    for f in dist.files or ():
        name = str(f).replace(os.sep, "/")
        if name.endswith(".py") and name.split("/")[0] == package:
            files[name] = f.read_binary() if hasattr(f, "read_binary") else open(f.locate(), "rb").read()
    return dist.version, files


@pytest.fixture(scope="module")
def installed_trl() -> tuple[str, Atlas]:
    version, files = _installed("trl")
    data = encode("trl", [Release(version, "installed", "site-packages", "", [], read_package(files, "trl"))])
    return version, Atlas(data)


def test_installed_trl_matches_the_atlas_entry_for_its_version(installed_trl):
    version, fresh = installed_trl
    atlas = Atlas.load("trl")
    assert atlas.release(version) == version, f"the atlas has no entry for the installed trl {version}"
    assert atlas.modules(version) == fresh.modules(version)
    for module in fresh.modules(version):
        assert atlas.exports(version, module, private=True) == fresh.exports(version, module, private=True), module
    qualnames = sorted(set(fresh._functions) | set(fresh._classes))
    assert len(qualnames) > 300  # 439 functions and classes in trl 1.16.0
    for q in qualnames:
        if q in fresh._functions:
            assert atlas.signature(version, q) == fresh.signature(version, q), q
        if q in fresh._classes:
            assert atlas.class_info(version, q) == fresh.class_info(version, q), q
            assert _class_entry(atlas, atlas._index(version), q) == _class_entry(fresh, 0, q), q


def _class_entry(atlas: Atlas, i: int, qualname: str) -> list:
    """A class's raw atlas entry with its __init__ signature id replaced by the signature itself."""
    entry = list(atlas._class(i, qualname))
    entry[2] = None if entry[2] is None else atlas._signatures[entry[2]]
    return entry


def _runtime_params(obj) -> list[tuple[str, str]]:
    kinds = {inspect.Parameter.POSITIONAL_ONLY: "po", inspect.Parameter.POSITIONAL_OR_KEYWORD: "pk",
             inspect.Parameter.VAR_POSITIONAL: "va", inspect.Parameter.KEYWORD_ONLY: "ko",
             inspect.Parameter.VAR_KEYWORD: "vk"}
    params = list(inspect.signature(obj).parameters.values())
    return [(p.name, kinds[p.kind]) for p in params if p.name != "self"]


@pytest.mark.trl
@pytest.mark.parametrize("name", ["SFTTrainer", "DPOTrainer", "GRPOTrainer", "RewardTrainer", "KTOTrainer",
                                  "RLOOTrainer", "create_reference_model"])
def test_signatures_match_inspect_on_the_real_classes(name):
    import trl

    version = importlib.metadata.version("trl")
    if not Atlas.load("trl").has(version, f"trl.{name}"):
        pytest.skip(f"trl {version} does not export {name}")
    sig = Atlas.load("trl").signature(version, f"trl.{name}")
    obj = getattr(trl, name)
    runtime = _runtime_params(obj.__init__ if inspect.isclass(obj) else obj)
    assert [(p.name, p.kind) for p in sig.params] == runtime


@pytest.mark.trl
@pytest.mark.parametrize("name", ["SFTConfig", "DPOConfig", "GRPOConfig", "RewardConfig", "KTOConfig"])
def test_config_fields_match_dataclasses_fields_with_the_installed_transformers(name):
    import trl

    version = importlib.metadata.version("trl")
    tf = importlib.metadata.version("transformers")
    atlas = Atlas.load("trl")
    if tf not in Atlas.load("transformers").releases():
        pytest.skip(f"transformers {tf} is not in the transformers atlas")
    if not atlas.has(version, f"trl.{name}"):
        pytest.skip(f"trl {version} does not export {name}")
    fields = atlas.config_fields(version, f"trl.{name}", transformers=tf)
    runtime = {f.name: f for f in dataclasses.fields(getattr(trl, name))}
    assert set(fields) == set(runtime)
    for f in fields.values():
        if f.default is not None and not f.factory and f.default in ("None", "True", "False"):
            assert repr(runtime[f.name].default) == f.default, f.name
    # the constructor the atlas derives takes exactly the init fields, in dataclass order
    sig = atlas.signature(version, f"trl.{name}", transformers=tf)
    runtime_sig = _runtime_params(getattr(trl, name).__init__)
    assert [(p.name, p.kind) for p in sig.params] == runtime_sig
    assert all(isinstance(p, Param) for p in sig.params)
