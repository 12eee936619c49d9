"""The one list of annotation exporters (each also reads its own format back and recognises its files by
content), for the GUI, CLI and tests."""
from __future__ import annotations

from pathlib import Path

from storage.errors import ImportFailed, RowProblem
from storage.exporters.common import ExportContext, Exporter, ExportRefused, Row, files_to_read

__all__ = ["ExportContext", "ExportRefused", "Exporter", "Row", "detect_format", "exporters", "get_exporter",
           "read_suffixes"]


def exporters() -> list[Exporter]:
    from storage.exporters.audacity import AudacityExporter
    from storage.exporters.elan import ElanExporter
    from storage.exporters.native import EchoMindExporter, FriendBenchExporter
    from storage.exporters.praat import TextGridExporter
    from storage.exporters.tables import CsvExporter, JsonLinesExporter, ParquetExporter

    return [FriendBenchExporter(), EchoMindExporter(), ParquetExporter(), CsvExporter(), JsonLinesExporter(),
            ElanExporter(), TextGridExporter(), AudacityExporter()]


def read_suffixes() -> list[str]:
    """Every file suffix an annotation reader takes, each once, per-recording formats first (an open dialog's
    filter): the exporters' own extensions, so a new format is offered as soon as it is listed."""
    ordered = sorted(exporters(), key=lambda e: not e.per_stimulus)
    return list(dict.fromkeys(e.extension for e in ordered))


def get_exporter(name: str) -> Exporter:
    """The exporter called `name`; raises ExportRefused naming the known ones."""
    for exporter in exporters():
        if exporter.name == name.lower():
            return exporter
    known = ", ".join(e.name for e in exporters())
    raise ExportRefused(f"Unknown export format '{name}'; known formats: {known}")


def detect_format(path: Path) -> Exporter:
    """The reader most sure, by content, that it reads `path`: a file, or a folder of one format's
    per-recording files (ELAN, Praat, Audacity). Raises `ImportFailed` in one line when none is."""
    path = Path(path)
    if not path.exists():
        raise ImportFailed(RowProblem(str(path), None, None, "<no such file or folder>", "an annotation file"))
    readers = exporters()

    def score(exporter: Exporter) -> float:
        if not path.is_dir():
            return exporter.detect(path)
        # a folder is read as one per-recording format's files (its extension picks them); a few show which
        files = files_to_read(path, exporter.extension)[:3] if exporter.per_stimulus else []
        return max((exporter.detect(file) for file in files), default=0.0)

    scores = [score(exporter) for exporter in readers]
    best = max(range(len(readers)), key=lambda i: (scores[i], -i))   # on a tie, the earlier in the list
    if scores[best] <= 0:
        what = "a folder" if path.is_dir() else "a file"
        raise ImportFailed(RowProblem(path.name, None, None, f"<{what} in no annotation format Thinslice reads>",
                                      "one of: " + "; ".join(e.title for e in readers)))
    return readers[best]
