"""The kinds of rule every migration is built from: small public modules, each tested on its own.

* `cst`: CST helpers (call arguments by keyword or position, literal values, dotted names, layout-keeping edits);
* `imports`: resolving TRL names through imports (libcst's `QualifiedNameProvider`) and the one way rules edit
  imports (`ensure_imports`, `drop_unused_import`, `insert_after_imports`, ...);
* `symbols`: moved and removed TRL symbols (`Moved` / `Gone` tables in a `SymbolMigration`, or `replacement()` in a
  `SymbolTransformer` subclass);
* `options`: renamed and removed keywords of TRL calls and their values (`OptionMigration`, `OptionChange`);
* `trainer_subclasses`: a project's own subclasses of a library trainer (in the file and the project modules it
  imports) that pass a keyword through to the library's constructor;
* `requirements`: raising dependency specifiers to the floors of a TRL line (for manifest rules).

Kinds import `migrations.base` and each other, never a release folder; release folders import kinds, never each
other (`tests/migrations/test_registry.py`).
"""
