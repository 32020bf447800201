from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_migrate, post_save


class AgentsUiConfig(AppConfig):
    name = "agents_ui"
    verbose_name = "Agents UI"

    def ready(self) -> None:
        from agents_ui import checks, comparisons, people  # noqa: F401 (checks, comparisons: registered on import)
        from agents_ui.runs import tracing

        tracing.configure()  # only where OTEL_* variables name an exporter

        post_migrate.connect(people.create_everyday_group, sender=self)
        post_save.connect(people.join_everyday_group, sender=settings.AUTH_USER_MODEL)
