"""Log lines as JSON, one object a line, when AGENTS_UI_LOG_FORMAT=json (project/settings.py).

The standard library's logging with this small formatter: a line has the time, level, logger and
message, and the fields a call passes with `extra=` (a run's id, its agent, outcome, durations).
Nothing else of the record: the product never logs what people or agents said, nor a credential.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

# What every LogRecord has: anything else on a record came from `extra=`.
_STANDARD = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


class JsonLinesFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                line[key] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)
