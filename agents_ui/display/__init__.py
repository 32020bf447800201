"""How a run is shown: its cards, its Markdown, its media and what the live stream sends."""
