"""The review engine: run the rules over one recipe at one revision and build the Review."""
