"""Demo A2A agents, served by the product itself through the a2a-sdk's server side (no LLM)."""
