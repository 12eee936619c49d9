"""The one list of annotation exporters (each also reads its own format back), for the GUI, CLI and tests."""
from __future__ import annotations

from storage.exporters.common import ExportContext, Exporter, ExportRefused, Row

__all__ = ["ExportContext", "ExportRefused", "Exporter", "Row", "exporters", "get_exporter"]


def exporters() -> list[Exporter]:
    from storage.exporters.audacity import AudacityExporter
    from storage.exporters.elan import ElanExporter
    from storage.exporters.native import EchoMindExporter, FriendBenchExporter
    from storage.exporters.praat import TextGridExporter
    from storage.exporters.tables import CsvExporter, JsonLinesExporter, ParquetExporter

    return [FriendBenchExporter(), EchoMindExporter(), ParquetExporter(), CsvExporter(), JsonLinesExporter(),
            ElanExporter(), TextGridExporter(), AudacityExporter()]


def get_exporter(name: str) -> Exporter:
    """The exporter called `name`; raises ExportRefused naming the known ones."""
    for exporter in exporters():
        if exporter.name == name.lower():
            return exporter
    known = ", ".join(e.name for e in exporters())
    raise ExportRefused(f"Unknown export format '{name}'; known formats: {known}")
