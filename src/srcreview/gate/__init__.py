"""The CI gate: which findings fail a run, baselines and waivers."""
