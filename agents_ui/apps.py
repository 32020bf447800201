from django.apps import AppConfig


class AgentsUiConfig(AppConfig):
    name = "agents_ui"
    verbose_name = "Agents UI"
