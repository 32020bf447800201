"""Tests of agents_ui.display: the run's cards, its Markdown and what the live stream sends."""
