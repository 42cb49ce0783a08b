"""Rules: declarative TOML files, validated on load, and their generated reference."""
