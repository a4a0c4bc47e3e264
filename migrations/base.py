"""The migration contract: what every rule in `migrations/` provides and what the engine gives it.

A rule knows TRL and nothing of files or the command line. The engine (`compat.migrate`) reads a file, parses it
once with libcst, and hands the tree to every selected rule in order. Two kinds of rule exist:

* `PythonMigration`: rewrites a Python module (also the code cells of a notebook). Its `transform` receives a
  `libcst.MetadataWrapper` over the current tree and a `RuleContext`, and returns the new module. Rules are usually
  written as a `MigrationTransformer` subclass, which knows how to put a TODO marker above the statement a node
  belongs to.
* `ManifestMigration`: rewrites a dependency manifest (requirements*.txt, pyproject.toml, setup.cfg, ...) as text.

A rule is cheap to skip: `triggers` are plain substrings, and a file containing none of them is never parsed for it
(`Migration.triggered_by`, and `gates` / `gates_match` for the engine's byte prefilter over many rules at once).

A rule's identity is derived from where it lives, never listed (`rule_identity`): in `migrations/v1_14/removed_bco.py`
the id is `removed-bco` (the module name, `_` -> `-`), the release is 1.14 (the folder), the library is TRL, and the
guide anchor defaults to the id; a rule may be a package (`migrations/v1_13/ppo_to_grpo/`: id `ppo-to-grpo`). A library
folder `migrations/<library>/v<major>_<minor>/<rule>.py` (e.g. `migrations/transformers/v4_57/...`) holds rules forced
by another package's release: same derivation, `library` = the folder.
"""

from __future__ import annotations

import functools
import io
import os
import re
import tokenize
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal, NamedTuple

import libcst as cst
from libcst._metadata_dependent import LazyValue
from libcst.metadata import PositionProvider
from packaging.version import Version

from compat.markers import matches_patterns
from migrations import libcst_speedups
from migrations.kinds.local_classes import LocalClasses

libcst_speedups.install()  # libcst's visitor-method lookup, once per provider class (see the module)

TODO_PREFIX = "# TODO(trl-compat):"
#: A rule's `order` at or above this runs after every other rule of its library, whatever their release folders.
RUNS_LAST = 1000
GUIDE = "MIGRATION.md"
#: Where the guide is read on the web: findings carry `guide_url(anchor)` beside the anchor (report, JSON, SARIF).
#: The "Migration guide" of the wheel's Project-URLs (pyproject.toml [project.urls]); a test keeps the two equal.
GUIDE_URL = "https://github.com/trl-compat/trl-compat/blob/main/MIGRATION.md"


def guide_url(anchor: str) -> str:
    """The web address of the guide's section `anchor` (the guide itself for an empty anchor)."""
    return f"{GUIDE_URL}#{anchor}" if anchor else GUIDE_URL

Severity = Literal["manual", "warning", "info"]
FixSafety = Literal["safe", "unsafe"]
FIX_SAFETY: dict[str, str] = {
    "safe": "behaviour-preserving on the target: import moves, renames the target documents as equivalent, faithful "
            "copies of removed helpers, markers only",
    "unsafe": "changes what runs: PPO -> GRPO, dropped value heads, written-out defaults, raised pins, other "
              "numerics or another implementation; review the diff",
}


def module_stem(path: str | None) -> str:
    """The last part of the module name the file at `path` is imported as (`src/pkg/utils.py` -> `utils`)."""
    return os.path.splitext(os.path.basename(path or ""))[0]


def project_import(stem: str, name: str) -> str:
    """An entry of `Options.project_imports`: `name` (or `*`) imported from a module whose last part is `stem`."""
    return f"{stem}:{name}"


@dataclass(frozen=True)
class Options:
    """What the user asked for, shared by every rule of one run."""

    target_trl: Version = Version("1.16.0")
    to: Literal["grpo", "online-dpo"] = "grpo"
    # (library, target version) for the other libraries that have rule folders (`migrations/<library>/v*/`); a
    # library rule applies only when its library's target is given here (`compat.migrate` sets them from
    # --target-transformers / --target-peft / --target-accelerate, else chosen like the TRL target).
    # A tuple, not a dict, so that Options stays hashable.
    targets: tuple[tuple[str, Version], ...] = ()
    # distributions the migrated code of this run needs that the project may not declare yet ("trl-compat" once a
    # rewritten file imports `compat`): set by the runner for the manifests, which it migrates after the code.
    project_needs: tuple[str, ...] = ()
    # False when the run found no TRL in the project (no file imports `trl`, no manifest requires it): the rules of
    # the stack jump TRL forces (transformers/peft/accelerate folders, launcher configs) then leave it alone.
    uses_trl: bool = True
    # False when nothing in the project uses TRL's vLLM integration (`use_vllm=`, `trl vllm-serve`, `trl[vllm]`, ...):
    # a `vllm` pin then belongs to the project's own inference code and the manifests leave it alone
    uses_trl_vllm: bool = True
    # the repository's own classes across the modules of this run (`migrations.kinds.local_classes`), built by the
    # runner from the files it walks; None for a single source (`migrate_source`): nothing is known beyond the file
    local_classes: LocalClasses | None = None
    # what the files of the run import from modules that may be the project's own: `utils:x` for `from utils import
    # x` / `from .pkg.utils import x` (every `from M import ...` whose M is not a library the rules know), `utils:*`
    # for a star import: an unused import of a gone name another module takes from this one is not dropped
    # (`SymbolMigration`). Built by the runner (empty for a single source); a notebook adds the words of the code
    # the rules never see (IPython lines, `%%` cells, cells that do not parse) under its own name
    project_imports: frozenset[str] = frozenset()

    def imported_elsewhere(self, path: str | None, name: str) -> bool:
        """Whether some file of the run imports `name`, or `*`, from the module the file at `path` is imported as."""
        stem = module_stem(path)
        return project_import(stem, name) in self.project_imports or project_import(stem, "*") in self.project_imports

    def with_imported_elsewhere(self, path: str | None, names: Iterable[str]) -> Options:
        """These options with `names` counted as imported from the file at `path` by another module."""
        stem = module_stem(path)
        return replace(self, project_imports=self.project_imports | {project_import(stem, n) for n in names})

    @property
    def atlas_trl(self) -> str:
        """The target TRL as the atlas spells a release it holds, for looking up fields and signatures: `1.16` (as
        typed after `--target-trl`) is `"1.16.0"`; a patch release the atlas lacks (`1.14.2`), the newest it holds
        below it."""
        return _atlas_trl(self.target_trl)

    def target(self, library: str) -> Version | None:
        """The version a run targets for `library` ("trl" or a library folder's name); None when not given."""
        if library == "trl":
            return self.target_trl
        return next((version for name, version in self.targets if name == library), None)


@functools.lru_cache(maxsize=8)
def _atlas_trl(target: Version) -> str:
    from migrations.atlas import Atlas

    releases = Atlas.load("trl").releases()
    return next((r for r in reversed(releases) if Version(r) <= target), releases[0])


@dataclass(frozen=True)
class Finding:
    """One thing a rule did or wants a human to do, at a position in the *original* file (1-based line/column)."""

    rule: str
    message: str
    line: int = 0
    column: int = 0
    anchor: str = ""
    severity: Severity = "manual"
    changed: bool = False  # True for an applied rewrite worth reporting, False for a manual step or warning
    cell: int | None = None  # notebooks: the 0-based index of the cell (in the notebook's `cells`); line is in it


@dataclass
class RuleContext:
    """Per-file state a rule may read and write: the options, the file's path, and the findings it reports."""

    options: Options = field(default_factory=Options)
    path: str | None = None
    findings: list[Finding] = field(default_factory=list)
    # the code of the tree the rule is handed (`wrapper.module.code`), as the engine holds it already: a rule's
    # text gate reads it instead of generating the code again; None outside the engine (`module_code` then builds it)
    code: str | None = None

    def module_code(self, wrapper: cst.MetadataWrapper) -> str:
        """The code of `wrapper.module`: `code` when the engine gave it, else generated from the tree."""
        return self.code if self.code is not None else wrapper.module.code

    def report(self, finding: Finding) -> None:
        self.findings.append(finding)


RELEASE_FOLDER = re.compile(r"^v(\d+)_(\d+)$")


class RuleLayoutError(RuntimeError):
    """A rule that does not sit where the registry derives its identity from, or a duplicate id."""


@dataclass(frozen=True)
class RuleIdentity:
    """Who a rule is, from the module it lives in (see the module docstring)."""

    id: str  # "ppo-to-grpo"
    release: str  # "1.13"
    library: str  # "trl", or a library folder's name ("transformers")
    module: str  # the rule module (or package) itself: "migrations.v1_13.ppo_to_grpo"


@functools.lru_cache(maxsize=None)
def rule_identity(module: str) -> RuleIdentity | None:
    """The identity of a rule defined in `module` (a dotted name), None when `module` is not inside a rule module.

    `<root>.v<M>_<m>.<rule>[.<anything>]` is a TRL rule; `<root>.<library>.v<M>_<m>.<rule>[...]` a rule of another
    library. `<root>` is the registry's top-level package (`migrations`, or a test's own). The id is `<rule>` with
    underscores turned into hyphens, exactly.
    """
    parts = module.split(".")
    for at, library in ((1, "trl"), (2, parts[1] if len(parts) > 2 else "")):
        if len(parts) > at + 1 and not parts[at + 1].startswith("_") and (found := RELEASE_FOLDER.match(parts[at])):
            if at == 2 and (parts[1].startswith("_") or RELEASE_FOLDER.match(parts[1])):
                continue
            return RuleIdentity(
                id=parts[at + 1].replace("_", "-"),
                release=f"{int(found.group(1))}.{int(found.group(2))}",
                library=library,
                module=".".join(parts[: at + 2]),
            )
    return None


class _Derived:
    """A read-only attribute computed from the rule (its module), unless the class or the instance sets its own."""

    def __init__(self, compute: Callable[[Migration], str], doc: str) -> None:
        self.compute = compute
        self.__doc__ = doc

    def __get__(self, rule: Migration | None, owner: type | None = None):  # type: ignore[no-untyped-def]
        return self if rule is None else self.compute(rule)


class Migration:
    """Base of every rule: the trigger substrings and what it does; its identity comes from its module.

    `id`, `release`, `library` and `anchor` are derived (`rule_identity` of the module the rule's class is defined
    in); a rule may set `anchor` to link another guide section. Rules made in tests outside a rule folder set `id` and
    `release` themselves (class attributes take precedence over the derived properties).
    """

    summary: ClassVar[str]  # one line for --list
    triggers: ClassVar[tuple[str, ...]] = ()
    # Optional second gate, for triggers that are common words outside TRL code (`pad_token`, `float32`, `losses`):
    # when set, a file must ALSO contain one of these substrings (typically `("trl",)`: a rule that resolves TRL
    # names through imports cannot apply to a file that never mentions `trl`).
    requires: ClassVar[tuple[str, ...]] = ()
    # Optional third gate, a regular expression that must also match (ASCII-only, so the engine can test it on the
    # raw bytes too): for rules whose trigger substrings are everywhere (`.float()`) but whose shape is rare.
    pattern: ClassVar[str | None] = None
    # The rule is needed by a target at or above `release`; a rule may also stop applying at `until`
    # (exclusive), e.g. a rule that only makes sense while a name still exists.
    until: ClassVar[str | None] = None
    # Fix safety, classed as ruff classes fixes (see FIX_SAFETY): "safe" rewrites preserve behaviour on the target,
    # "unsafe" ones change the algorithm, the data, the numerics or the pins. Unclassified rules count as unsafe.
    fix_safety: ClassVar[FixSafety] = "unsafe"

    @property
    def identity(self) -> RuleIdentity:
        found = rule_identity(type(self).__module__)
        if found is None:
            raise RuleLayoutError(
                f"{type(self).__qualname__} is defined in {type(self).__module__!r}, which is not a rule module: "
                "define a rule's class in migrations/v<major>_<minor>/<rule_id>.py (or a package of that name), "
                "or set `id` and `release` on it"
            )
        return found

    # Derived, but plain (non-data) descriptors: a class or instance attribute of the same name takes precedence.
    id = _Derived(lambda rule: rule.identity.id,
                  "Stable public name, used by --only/--skip: the module name with `-` for `_` (\"ppo-to-grpo\").")
    release = _Derived(lambda rule: rule.identity.release, "The release that forced the rule (\"1.13\"): its folder.")
    library = _Derived(lambda rule: getattr(rule_identity(type(rule).__module__), "library", "trl"),
                       "\"trl\", or the library folder the rule's release folder sits in.")
    anchor = _Derived(lambda rule: rule.id, "The MIGRATION.md section (`<a id=...>`): the id unless the rule sets one.")

    def applies(self, options: Options) -> bool:
        """True when a run targeting `options` needs this rule (its library's target at or above `release`)."""
        wanted = options.target(self.library)
        if wanted is None:
            return False
        target = Version(wanted.base_version)
        if target < Version(self.release):
            return False
        return self.until is None or target < Version(self.until)

    def triggered_by(self, text: str | bytes) -> bool:
        """The cheap prefilter: any trigger substring, and (if set) any `requires` substring and a `pattern` match."""
        key = "_gates_bytes" if isinstance(text, bytes) else "_gates_str"
        own = self.__dict__.get(key)
        if own is None:
            own = self.__dict__[key] = gates([self], as_bytes=isinstance(text, bytes))
        return gates_match(own, text)


class Gate(NamedTuple):
    """One prefilter test shared by the rules with the same `requires` and `pattern`: a file passes when it holds one
    of `requires` (when any), one of `triggers`, and matches `pattern` (when set)."""

    requires: tuple[str | bytes, ...]
    triggers: tuple[str | bytes, ...]
    pattern: re.Pattern | None


def gates(rules: Sequence[Migration], *, as_bytes: bool = False) -> list[Gate]:
    """The prefilter of `rules`, grouped: one `Gate` per distinct (`requires`, `pattern`), triggers deduplicated.

    Ungated groups first (nothing to pay for before their triggers), patterned ones last; `as_bytes` encodes every
    substring and pattern to test raw file bytes (patterns are ASCII-only by contract).
    """
    enc = (lambda t: t.encode()) if as_bytes else (lambda t: t)
    groups: dict[tuple[tuple[str, ...], str | None], list[str]] = {}
    for r in rules:
        groups.setdefault((tuple(q for q in r.requires if q), r.pattern), []).extend(t for t in r.triggers if t)
    out = [
        Gate(tuple(enc(q) for q in req), tuple(enc(t) for t in dict.fromkeys(trig)),
             None if pattern is None else _compiled(enc(pattern)))
        for (req, pattern), trig in groups.items()
    ]
    return sorted(out, key=lambda g: (len(g.requires), g.pattern is not None))


def gates_match(groups: Sequence[Gate], data: str | bytes) -> bool:
    """True when `data` passes one of the gates (see `Gate`)."""
    return any(
        (not g.requires or any(q in data for q in g.requires))  # type: ignore[operator]
        and any(t in data for t in g.triggers)  # type: ignore[operator]
        and (g.pattern is None or g.pattern.search(data) is not None)  # type: ignore[arg-type]
        for g in groups
    )


@functools.lru_cache(maxsize=None)
def _compiled(pattern: str | bytes) -> re.Pattern:
    return re.compile(pattern)


class PythonMigration(Migration):
    """A rule over one Python module.

    Either override `transform`, or set `transformer` to a `MigrationTransformer` subclass and keep the default
    `transform`, which runs it over the wrapper and hands back `wrapper.module` itself when nothing changed.

    Contract with the engine (`compat.migrate`): the engine passes the *same* wrapper to consecutive rules while the
    tree is unchanged, so metadata a rule resolves (e.g. `QualifiedNameProvider`) is computed once per file and
    shared. Return `wrapper.module` itself (the same object) when the rule changed nothing: the engine then skips a
    code comparison. Never mutate nodes in place and never put one node object at two places in the returned tree
    (the engine re-wraps the result without a deep copy).
    """

    transformer: ClassVar[type[MigrationTransformer] | None] = None

    def transform(self, wrapper: cst.MetadataWrapper, ctx: RuleContext) -> cst.Module:
        if self.transformer is None:
            raise NotImplementedError(f"{type(self).__name__} sets neither `transformer` nor `transform`")
        visitor = self.transformer(self, ctx)
        new = wrapper.visit(visitor)
        return new if visitor.changed else wrapper.module


class ManifestMigration(Migration):
    """A rule over one dependency manifest, as text.

    `patterns` are fnmatch globs: one without a `/` matches the file's base name (`requirements*.txt`), one with a `/`
    matches the path's trailing components (`requirements/*.txt`: the files a `-r requirements/base.txt` names).
    """

    patterns: ClassVar[tuple[str, ...]] = ()

    def matches(self, path: str) -> bool:
        return matches_patterns(path, self.patterns)

    def rewrite(self, text: str, filename: str, ctx: RuleContext) -> str:
        raise NotImplementedError


#: The widest a marker line may be, its indentation included (`fit_marker`).
MARKER_WIDTH = 100
#: What ends a summary cut inside a word run (ASCII: the file may be in any encoding).
ELLIPSIS = "..."
#: A clause shorter than this is no summary on its own (`model.save_pretrained: ...`): cut by words instead.
_MIN_CLAUSE = 32
#: Where a message's clause ends: `;`, `:` or `.` before a space, a parenthesis or a dash.
_CLAUSE_END = re.compile(r"[;:.](?= )| \(| -- | - ")
_NEW_FORM = re.compile(r"^# TODO\(trl-compat\): (?P<body>.*?) \[(?P<tag>[A-Za-z0-9_.:-]+)\]\s*$")
_OLD_FORM = re.compile(r"^# TODO\(trl-compat\): (?P<body>.*?) \(see MIGRATION\.md#(?P<tag>[A-Za-z0-9_-]+)\)\s*$")


def todo_text(message: str, anchor: str, rule: str | None = None) -> str:
    """The marker for a manual step as a rule writes it: `# TODO(trl-compat): <message> [<rule id>]`.

    The engine cuts every marker line wider than `MARKER_WIDTH` at the place it was written (`fit_markers`), so the
    full message only lives in the tree while the rules run; the report keeps it, with the guide anchor and URL.
    `rule` defaults to `anchor` (a rule's anchor is its id unless it links another section).
    """
    tag = rule or anchor
    body = " ".join(message.split())
    return f"{TODO_PREFIX} {body} [{tag}]" if tag else f"{TODO_PREFIX} {body}"


def summarize(message: str, width: int) -> str:
    """`message` in at most `width` characters: all of it when it fits, else the longest run of whole clauses that
    fits (at least `_MIN_CLAUSE` long), else its words up to the width with `ELLIPSIS`."""
    message = " ".join(message.split())
    if len(message) <= width:
        return message
    best = None
    for end in _CLAUSE_END.finditer(message):
        cut = message[: end.start()].rstrip(" ,")
        if len(cut) > width:
            break
        if len(cut) >= _MIN_CLAUSE and _balanced(cut):
            best = cut
    if best is not None:
        return best
    room = max(width - len(ELLIPSIS), 1)
    cut = message[: room + 1]
    cut = cut[: cut.rindex(" ")] if " " in cut[1:] else message[:room]
    return cut.rstrip(" ,;:(") + ELLIPSIS


def _balanced(text: str) -> bool:
    """No bracket or backquote left open in `text` (a clause does not end inside `(TRL 0.27 - 1.0)`)."""
    return (text.count("(") == text.count(")") and text.count("[") == text.count("]")
            and text.count("{") == text.count("}") and text.count("`") % 2 == 0)


def fit_marker(text: str, column: int = 0) -> str:
    """A marker `todo_text` wrote, cut to fit `MARKER_WIDTH` when it starts at 0-based `column`: the prefix, a
    summary of the message (`summarize`) and the rule id. Anything else (an old-format marker, a user's comment) is
    returned as it is. At an indentation deeper than about 50 columns the summary keeps 16 characters and the line
    may pass the width."""
    if column + len(text) <= MARKER_WIDTH:
        return text
    found = _NEW_FORM.match(text)
    if found is None:
        return text
    tag = found.group("tag")
    width = MARKER_WIDTH - column - len(TODO_PREFIX) - 1 - len(tag) - 3
    return f"{TODO_PREFIX} {summarize(found.group('body'), max(width, 16))} [{tag}]"


def same_marker(existing: str, text: str) -> bool:
    """Whether the comment `existing` (as found in a file) is the marker `text` (as `todo_text` writes it): equal,
    or `fit_marker`'s cut of it (same rule id, its summary a prefix of the message), or the old format of an earlier
    trl-compat run (`... (see MIGRATION.md#anchor)`, with the same full message)."""
    existing = existing.strip()
    text = text.strip()
    if existing == text:
        return True
    new = _NEW_FORM.match(text)
    if new is None:
        return False
    message = new.group("body")
    old = _OLD_FORM.match(existing)
    if old is not None:
        return " ".join(old.group("body").split()) == message
    cut = _NEW_FORM.match(existing)
    if cut is None or cut.group("tag") != new.group("tag"):
        return False
    summary = cut.group("body").removesuffix(ELLIPSIS).rstrip()
    return bool(summary) and message.startswith(summary)


def fit_markers(code: str) -> str:
    """`code` (Python) with every marker line wider than `MARKER_WIDTH` cut to fit at its indentation (`fit_marker`).

    Markers are found as comment tokens; code that does not tokenize (a notebook's masked IPython lines) is scanned
    line by line for comments that start a line."""
    if TODO_PREFIX not in code:
        return code
    lines = code.splitlines(keepends=True)
    if not any(len(line.rstrip("\r\n").expandtabs()) > MARKER_WIDTH and TODO_PREFIX in line for line in lines):
        return code
    spots: list[tuple[int, int]] = []  # (0-based line, column) of each marker comment
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.COMMENT and tok.string.startswith(TODO_PREFIX):
                spots.append((tok.start[0] - 1, tok.start[1]))
    except (tokenize.TokenError, SyntaxError):
        spots = [(n, len(line) - len(line.lstrip(" \t"))) for n, line in enumerate(lines)
                 if line.lstrip(" \t").startswith(TODO_PREFIX)]
    for n, col in spots:
        line = lines[n]
        body = line.rstrip("\r\n")
        if len(body.expandtabs()) <= MARKER_WIDTH:
            continue
        comment = body[col:]
        lines[n] = body[:col] + fit_marker(comment, len(body[:col].expandtabs())) + line[len(body):]
    return "".join(lines)


def fit_marker_lines(text: str) -> str:
    """`fit_markers` for a manifest (requirements, YAML, TOML): a marker is a `#` comment that starts a line."""
    if TODO_PREFIX not in text:
        return text
    lines = text.splitlines(keepends=True)
    for n, line in enumerate(lines):
        body = line.rstrip("\r\n")
        stripped = body.lstrip(" \t")
        if stripped.startswith(TODO_PREFIX) and len(body.expandtabs()) > MARKER_WIDTH:
            indent = body[: len(body) - len(stripped)]
            lines[n] = indent + fit_marker(stripped, len(indent.expandtabs())) + line[len(body):]
    return "".join(lines)


def marker_present(existing: Iterable[str], text: str) -> bool:
    """Whether one of the comments `existing` is the marker `text` (`same_marker`)."""
    return any(same_marker(e, text) for e in existing)


def add_todo_lines(stmt: cst.CSTNode, texts: list[str]) -> cst.CSTNode:
    """Return `stmt` with one comment line per text above it, skipping any marker already present (idempotent)."""
    leading = list(getattr(stmt, "leading_lines", ()))
    present = [line.comment.value for line in leading if line.comment is not None]
    new = [cst.EmptyLine(comment=cst.Comment(t)) for t in dict.fromkeys(texts) if not marker_present(present, t)]
    if not new:
        return stmt
    return stmt.with_changes(leading_lines=[*leading, *new])


def dedupe_header_todos(module: cst.Module) -> cst.Module:
    """Drop TODO markers added to the first statement that the module header already holds.

    libcst keeps the comments above a module's first statement in `Module.header`, not in the statement's
    `leading_lines`, so `add_todo_lines` cannot see them there; without this a second run would add them again.
    """
    if not module.body or not module.header:
        return module
    present = [ln.comment.value for ln in module.header if ln.comment is not None]
    first = module.body[0]
    lines = list(getattr(first, "leading_lines", ()))
    keep = [ln for ln in lines if not (ln.comment is not None and ln.comment.value.startswith(TODO_PREFIX)
                                       and marker_present(present, ln.comment.value))]
    if len(keep) == len(lines):
        return module
    return module.with_changes(body=[first.with_changes(leading_lines=keep), *module.body[1:]])



_NO_DEFAULT = object()


class LazyMetadata:
    """Mixin for a libcst visitor or transformer: metadata a pass needs only now and then, resolved on first use.

    A provider in `METADATA_DEPENDENCIES` is resolved over the whole tree before the pass starts, even when the pass
    never asks for it; `lazy_metadata(Provider, node)` resolves `Provider` through the wrapper the pass runs on the
    first time it is asked (the wrapper caches it, so a later pass over the same tree gets it for free). Use it for
    providers a pass reads rarely (`ParentNodeProvider` of a conditional use, `PositionProvider` of a finding): the
    answers are the same as from a declared provider. Put the mixin before the libcst base class.
    """

    _wrapper: cst.MetadataWrapper | None = None

    @contextmanager
    def resolve(self, wrapper: cst.MetadataWrapper) -> Iterator[None]:  # type: ignore[override]
        self._wrapper = wrapper
        try:
            with super().resolve(wrapper):  # type: ignore[misc]
                yield
        finally:
            self._wrapper = None

    def lazy_metadata(self, provider: type, node: cst.CSTNode, default: object = _NO_DEFAULT) -> object:
        """What `get_metadata(provider, node[, default])` would answer had the pass declared `provider`.

        Raises KeyError when `node` has none and no default is given, or when the pass is not run through a
        `MetadataWrapper` (as `get_metadata` does for a declared provider then).
        """
        metadata = getattr(self, "metadata", {})
        if provider in metadata:  # declared: resolved up front
            mapping = metadata[provider]
        elif self._wrapper is not None:
            mapping = self._wrapper.resolve(provider)
        else:
            raise KeyError(f"{provider.__name__} cannot be resolved: {type(self).__name__} is not run through a "
                           "MetadataWrapper")
        if default is _NO_DEFAULT:
            value = mapping[node]
        else:
            value = mapping.get(node, default)
        return value() if isinstance(value, LazyValue) else value


class MigrationTransformer(LazyMetadata, cst.CSTTransformer):
    """A CSTTransformer that can mark any node with a TODO placed above the statement enclosing it.

    Call `self.todo(node, message, anchor)` from any visit/leave method (with an *original* node, so its position
    is known). The marker is added when the enclosing statement is left, and a `Finding` is reported.
    Subclasses that override `on_visit`/`on_leave` must call `super()`.

    Positions are resolved lazily: `PositionProvider` costs more than parsing the file, so it is computed (once per
    tree, cached by the wrapper) only when a rule reports something. Use `self.position(node)` rather than
    `self.get_metadata(PositionProvider, node)` unless you declare `PositionProvider` yourself.

    `self.changed` is True once any leave method returned something other than the node it was given (or a marker
    was added); the default `PythonMigration.transform` uses it to return the original module when nothing changed.
    """

    METADATA_DEPENDENCIES = ()

    def __init__(self, rule: Migration, ctx: RuleContext) -> None:
        super().__init__()
        self.rule = rule
        self.ctx = ctx
        self.changed = False
        self._wrapper: cst.MetadataWrapper | None = None
        self._stmt_stack: list[cst.CSTNode] = []
        self._pending: dict[int, list[str]] = {}
        # markers of a statement the rule removed (an import it dropped): they go above the next statement left at
        # the same depth or above (its next sibling, else the block's owner), else into the module's footer
        self._carried: list[str] = []
        self._carried_depth = 0
        # the manual finding of each marker text, by statement (and of the carried ones): a carried marker that lands
        # on a statement asking the same already is one step there, so its finding is withdrawn (report == file)
        self._findings: dict[tuple[int, str], Finding] = {}
        self._carried_findings: dict[str, list[Finding]] = {}
        self._first_stmt: cst.CSTNode | None = None
        self._header_comments: list[str] = []

    # -- position & reporting ---------------------------------------------------------------------------
    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        """1-based (line, column) of an *original* node; (0, 0) when unknown (e.g. a node the rule built)."""
        try:
            pos = self.get_metadata(PositionProvider, node).start
        except KeyError:
            if self._wrapper is None:
                return (0, 0)
            pos_map = self._wrapper.resolve(PositionProvider)
            if node not in pos_map:
                return (0, 0)
            pos = pos_map[node].start
        return (pos.line, pos.column + 1)

    def note(self, node: cst.CSTNode, message: str, *, severity: Severity = "info", changed: bool = True) -> None:
        """Report an applied rewrite (or a warning) without adding a marker."""
        line, col = self.position(node)
        self.ctx.report(Finding(self.rule.id, message, line, col, self.rule.anchor, severity, changed))

    def todo(self, node: cst.CSTNode, message: str, anchor: str | None = None) -> None:
        """Ask a human to do something about `node`: a marker above its statement and a manual finding."""
        anchor = self.rule.anchor if anchor is None else anchor
        line, col = self.position(node)
        if self._stmt_stack:
            # one marker per message and statement: the same step asked twice in one statement (`m.v_head =
            # m.v_head.to(...)`) is one manual step, in the report as in the file
            pending = self._pending.setdefault(id(self._stmt_stack[-1]), [])
            text = todo_text(message, anchor, self.rule.id)
            if text in pending:
                return
            pending.append(text)
        finding = Finding(self.rule.id, message, line, col, anchor, "manual", False)
        if self._stmt_stack:
            self._findings[(id(self._stmt_stack[-1]), text)] = finding
        self.ctx.report(finding)

    def _withdraw_repeats(self, carried: list[str], own: list[str], present: list[str]) -> None:
        """Withdraw the findings of carried marker texts that the receiving statement asks already (its own texts, or
        a marker present above it) or that were carried twice: each is one marker in the file, so one step."""
        seen = list(own) + present
        for text in carried:
            findings = self._carried_findings.pop(text, [])
            repeats = findings if text in seen or marker_present(seen, text) else findings[1:]
            for finding in repeats:
                self.ctx.findings[:] = [f for f in self.ctx.findings if f is not finding]
            seen.append(text)

    # -- statement tracking -----------------------------------------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Module):
            # libcst puts every comment above a module's first statement into `Module.header`, so a marker placed
            # above the first statement is found there on the next run (not in the statement's leading_lines).
            self._first_stmt = node.body[0] if node.body else None
            self._header_comments = [line.comment.value for line in node.header if line.comment is not None]
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._stmt_stack.append(node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        result = super().on_leave(original_node, updated_node)
        if result is not updated_node and result is not original_node:
            self.changed = True
        if isinstance(original_node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._stmt_stack.pop()
            texts = self._pending.pop(id(original_node), None)
            findings = {t: self._findings.pop((id(original_node), t)) for t in texts or ()
                        if (id(original_node), t) in self._findings}
            kept = isinstance(result, cst.CSTNode) or (isinstance(result, cst.FlattenSentinel) and bool(result.nodes))
            if self._carried and len(self._stmt_stack) <= self._carried_depth and kept:
                target = result if isinstance(result, cst.CSTNode) else result.nodes[0]  # type: ignore[union-attr]
                present = [ln.comment.value for ln in getattr(target, "leading_lines", ()) if ln.comment is not None]
                self._withdraw_repeats(list(dict.fromkeys(self._carried)), texts or [], present)
                texts = [*self._carried, *(texts or [])]
                self._carried = []
            if texts and not kept:
                self._carried.extend(texts)
                for text, finding in findings.items():
                    self._carried_findings.setdefault(text, []).append(finding)
                self._carried_depth = len(self._stmt_stack)
                return result
            if texts and original_node is self._first_stmt:
                texts = [t for t in texts if not marker_present(self._header_comments, t)]
            if texts and isinstance(result, cst.CSTNode):
                marked = add_todo_lines(result, texts)
                self.changed = self.changed or marked is not result
                result = marked
            elif texts and isinstance(result, cst.FlattenSentinel) and result.nodes:
                first, *rest = result.nodes
                result = cst.FlattenSentinel([add_todo_lines(first, texts), *rest])
                self.changed = True
        elif isinstance(original_node, cst.Module) and self._carried and isinstance(result, cst.Module):
            present = [line.comment.value for line in result.footer if line.comment is not None]
            self._withdraw_repeats(list(dict.fromkeys(self._carried)), [], present)
            new = [cst.EmptyLine(comment=cst.Comment(t)) for t in dict.fromkeys(self._carried)
                   if not marker_present(present, t)]
            self._carried = []
            result = result.with_changes(footer=[*result.footer, *new])
        return result
