"""vLLM knowledge over the generic interpreter: what the engine's code means, named once."""
