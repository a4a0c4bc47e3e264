"""Rules forced by accelerate releases (`migrations/accelerate/v<major>_<minor>/`; TRL >= 1.13 needs accelerate >= 1.4)."""
