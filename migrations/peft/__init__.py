"""Rules forced by peft releases (`migrations/peft/v<major>_<minor>/`; TRL >= 1.13 needs peft >= 0.13)."""
