"""Reading reviews back against the source: hand-written reviews, source registries, explain."""
