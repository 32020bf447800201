"""Reading /metrics as Prometheus does: the value of one series, summed over the labels not given."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


def value(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total
