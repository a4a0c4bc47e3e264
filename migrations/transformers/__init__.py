"""Rules forced by transformers releases (`migrations/transformers/v<major>_<minor>/`): the stack jump TRL's floors
force (transformers >= 4.56.2). A rule applies when the run's transformers target (`--target-transformers`, else
chosen like the TRL target) is at or above its folder's release. Spellings that work on every release the migrated
manifest allows are preferred (4.56.2 and the newest 5.x); tables of mechanical moves are generated from the API
atlas by `python -m migrations.atlas.stack_tables`."""
