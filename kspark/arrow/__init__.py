"""The Arrow <-> record batch codec now lives in :mod:`broker_lite.records.arrow`;
``kspark.arrow`` and its submodules remain the same modules under their old names."""

from kspark._aliases import alias_package

alias_package(__name__, "broker_lite.records.arrow")
