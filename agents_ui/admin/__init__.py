"""The admin for agent endpoints, one module per concern."""

from agents_ui.admin import endpoints

__all__ = ["endpoints"]
