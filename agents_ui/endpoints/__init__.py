"""Talking to agents, outside a run: clients behind the address guard, discovery, prepare(), plans,
the catalogue's cards, and the one place an agent error becomes a sentence."""
