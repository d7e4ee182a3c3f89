"""A config as DescribeConfigs describes it (Kafka's ``DescribeConfigsResponse`` entries): what
the broker's config resolution answers with and what the client's admin hands back."""

from __future__ import annotations

from dataclasses import dataclass

from .enums import ConfigSource, ConfigType


@dataclass(frozen=True)
class ConfigSynonym:
    """One layer's value of a config or of one of its synonyms (a broker default it falls back
    to, the same value in another unit)."""

    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True)
class ConfigEntry:
    """One config of a resource. ``value`` is None for sensitive configs (a password: its value
    and its synonyms' are never shown) and unset ones; ``source`` is that of the first synonym;
    ``config_type`` and ``documentation`` come with DescribeConfigs v3+."""

    name: str
    value: str | None
    source: ConfigSource
    read_only: bool = False
    sensitive: bool = False
    synonyms: tuple[ConfigSynonym, ...] = ()
    config_type: ConfigType = ConfigType.UNKNOWN
    documentation: str = ""

    @property
    def is_default(self) -> bool:
        return self.source == ConfigSource.DEFAULT_CONFIG
