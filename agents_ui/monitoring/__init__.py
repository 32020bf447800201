"""Watching the product run: metrics, health checks and structured logs (docs/operations.md).

- `metrics`: the Prometheus series and the text /metrics answers; `readings`: gauges read from the
  database at each scrape;
- `runs`: what a live run reports as it goes (its series, one log line at its start and its end);
- `health`: the checks behind /readyz;
- `middleware`: answers /healthz, /readyz and /metrics before anything else, and guards /metrics;
- `logs`: the JSON-lines formatter (AGENTS_UI_LOG_FORMAT=json).

The per-agent health the admin shows is computed from stored runs, in agents_ui.admin.health.
"""
