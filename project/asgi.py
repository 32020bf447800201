"""ASGI entry point: the product is served by uvicorn so that SSE responses really stream.

Static files are served by the same application (Django's ASGI static handler, which reads them
through the finders), so one uvicorn process is the whole product; put a CDN or proxy in front for
heavy traffic.
"""

import os

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

application = ASGIStaticFilesHandler(get_asgi_application())
