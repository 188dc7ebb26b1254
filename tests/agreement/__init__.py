"""Every shortcut against the long way it stands for: cached facts, stored plans, workers, whole-workspace runs."""
