"""The one window: filter and table on the left, the stimulus in the centre, what others said on the right."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QComboBox, QDockWidget, QLabel, QMainWindow, QMessageBox, QToolBar, QVBoxLayout,
                               QWidget)

from app.ncp import detail_traces
from app.session import Session
from storage import queries
from storage.errors import ThinsliceError
from storage.records import StimulusDetail
from storage.store import Store
from widgets.filter_bar import FilterBarView
from widgets.predictions_panel import PredictionsPanel
from widgets.ncp_task_page import NcpTaskPage
from widgets.scene_view import SceneView
from widgets.stimulus_table import StimulusTableModel, StimulusTableView
from widgets.stimulus_view import StimulusView
from widgets.import_dialog import ImportBackend, ImportDialog
from widgets.tasks import CancelToken, TaskRunner

MAX_COMPARED_MODELS = 4


class MainWindow(QMainWindow):
    """Wires the session, the store's queries (always on workers) and the views."""

    detailShown = Signal(int)        # stimulus id, after the detail area has been filled
    datasetsChanged = Signal()

    def __init__(self, store: Store, session: Session | None = None, settings: QSettings | None = None) -> None:
        super().__init__()
        self.store = store
        self.session = session or Session()
        self.settings = settings or QSettings("Thinslice", "Thinslice")
        self.runner = TaskRunner(self)
        self.setWindowTitle(f"Thinslice — {store.path.name}")
        self.setObjectName("MainWindow")
        self.setDockNestingEnabled(True)

        self.dataset_combo = QComboBox()
        self.dataset_combo.setMinimumContentsLength(24)
        self.dataset_combo.setToolTip("Dataset")
        self.annotator_label = QLabel()
        self.filter_bar = FilterBarView()
        self.table_model = StimulusTableModel(self.runner, self._fetch_ids, self._fetch_rows, self)
        self.table = StimulusTableView(self.table_model)
        self.stimulus_view = StimulusView()
        self.scene_view = SceneView()
        self.stimulus_view.register_page(["agentviss_scene"], self.scene_view)
        self.ncp_page = NcpTaskPage(detail_traces)
        self.stimulus_view.register_page(["ncp_task", "story"], self.ncp_page)
        self.predictions = PredictionsPanel()
        self.status_message = QLabel()
        self.store_label = QLabel(f"store: {store.path.name}")
        self.store_label.setToolTip(str(store.path))

        self._build_toolbar()
        self._build_docks()
        self._build_menus()
        self.statusBar().addWidget(self.status_message, 1)
        self.statusBar().addPermanentWidget(self.store_label)

        self.dataset_combo.currentIndexChanged.connect(self._dataset_picked)
        self.filter_bar.filterChanged.connect(self.session.set_filter)
        self.table.stimulusSelected.connect(self.session.select_stimulus)
        self.table_model.idsLoaded.connect(self._ids_loaded)
        self.session.filter_changed.connect(lambda f: self.table_model.set_query(f, list(self.session.compared_models)))
        self.session.stimulus_changed.connect(self._load_detail)
        self.session.annotator_changed.connect(self._show_annotator)

        self.session.set_annotator(str(self.settings.value("annotator", "") or ""))
        self._show_annotator(self.session.annotator)
        self._pending_select: int | None = None
        self.refresh_datasets(prefer=str(self.settings.value("last_dataset", "") or ""))
        self._restore_layout()

    # -- building ------------------------------------------------------------------------------
    def _build_toolbar(self) -> None:
        bar = QToolBar("Dataset")
        bar.setObjectName("DatasetToolbar")
        bar.setMovable(False)
        bar.addWidget(QLabel(" Dataset: "))
        bar.addWidget(self.dataset_combo)
        spacer = QWidget()
        spacer.setSizePolicy(spacer.sizePolicy().horizontalPolicy().Expanding,
                             spacer.sizePolicy().verticalPolicy().Preferred)
        bar.addWidget(spacer)
        bar.addWidget(self.annotator_label)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)

    def _build_docks(self) -> None:
        left = QWidget()
        layout = QVBoxLayout(left)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.filter_bar)
        layout.addWidget(self.table, 1)
        self.stimuli_dock = self._dock("Stimuli", "StimuliDock", left, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.predictions_dock = self._dock("Predictions", "PredictionsDock", self.predictions,
                                           Qt.DockWidgetArea.RightDockWidgetArea)
        self.setCentralWidget(self.stimulus_view)
        self.resizeDocks([self.stimuli_dock, self.predictions_dock], [480, 400], Qt.Orientation.Horizontal)

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                         | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, dock)
        return dock

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.import_action = QAction("&Import…", self, shortcut=QKeySequence("Ctrl+I"), triggered=self.open_import)
        file_menu.addAction(self.import_action)
        file_menu.addSeparator()
        self.quit_action = QAction("&Quit", self, shortcut=QKeySequence.StandardKey.Quit, triggered=self.close)
        file_menu.addAction(self.quit_action)
        self.file_menu = file_menu
        view = self.menuBar().addMenu("&View")
        for dock in (self.stimuli_dock, self.predictions_dock):
            view.addAction(dock.toggleViewAction())
        self.view_menu = view
        self.annotate_menu = self.menuBar().addMenu("&Annotate")
        set_name = QAction("Set &annotator name…", self, triggered=self._ask_annotator)
        self.annotate_menu.addAction(set_name)
        self.compare_menu = self.menuBar().addMenu("&Compare")
        self.help_menu = self.menuBar().addMenu("&Help")
        self.help_menu.addAction(QAction("&About Thinslice", self, triggered=self._about))

    # -- datasets ------------------------------------------------------------------------------
    def refresh_datasets(self, prefer: str | None = None) -> None:
        datasets = queries.list_datasets(self.store.cursor())
        current = prefer or self.dataset_combo.currentText()
        self.dataset_combo.blockSignals(True)
        self.dataset_combo.clear()
        for ds in datasets:
            label = ds.name + ("" if ds.name.lower().endswith("(sample)") or not ds.synthetic else " (synthetic)")
            self.dataset_combo.addItem(label, ds.id)
            self.dataset_combo.setItemData(self.dataset_combo.count() - 1,
                                           f"{ds.benchmark} · {ds.stimulus_count} stimuli · {ds.root}",
                                           Qt.ItemDataRole.ToolTipRole)
        index = max(0, self.dataset_combo.findText(current)) if current else 0
        self.dataset_combo.setCurrentIndex(index if datasets else -1)
        self.dataset_combo.blockSignals(False)
        self.datasetsChanged.emit()
        if datasets:
            self._dataset_picked(self.dataset_combo.currentIndex())
        else:
            self.status_message.setText("The store has no datasets yet: File > Import.")

    def select_dataset(self, name: str) -> bool:
        index = self.dataset_combo.findText(name)
        if index < 0:
            return False
        self.dataset_combo.setCurrentIndex(index)
        return True

    def _dataset_picked(self, index: int) -> None:
        dataset_id = self.dataset_combo.itemData(index)
        if dataset_id is None:
            return
        cur = self.store.cursor()
        facets = queries.dataset_facets(cur, dataset_id)
        self.filter_bar.set_facets(facets)
        self.session.set_compared_models(tuple(facets["model"][:MAX_COMPARED_MODELS]))
        self.session.set_dataset(dataset_id)
        self.settings.setValue("last_dataset", self.dataset_combo.currentText())

    # -- table and detail -----------------------------------------------------------------------
    def _fetch_ids(self, f: queries.StimulusFilter, sort: str, desc: bool):
        return queries.stimulus_ids(self.store.cursor(), f, sort, desc)

    def _fetch_rows(self, ids: list[int], models: list[str], modality: str | None):
        return queries.stimulus_rows(self.store.cursor(), ids, models, modality)

    def _ids_loaded(self, count: int) -> None:
        self.filter_bar.set_count(count)
        target = self._pending_select if self._pending_select is not None else self.session.stimulus_id
        self._pending_select = None
        if target is not None and self.table.select_stimulus(target):
            return
        if count:
            self.table.selectRow(0)
        else:
            self.session.select_stimulus(None)

    def select_stimulus_id(self, stimulus_id: int) -> None:
        """Select a stimulus by store id (from the command line, a chart or a failure list)."""
        if not self.table.select_stimulus(stimulus_id):
            self._pending_select = stimulus_id
            self.session.select_stimulus(stimulus_id)

    def _load_detail(self, stimulus_id: int | None) -> None:
        if stimulus_id is None:
            self._show_detail(None)
            return
        self.runner.submit("detail", lambda: queries.stimulus_detail(self.store.cursor(), stimulus_id),
                           self._show_detail, self._report_error)

    def _show_detail(self, detail: StimulusDetail | None) -> None:
        self.stimulus_view.set_detail(detail)
        self.predictions.set_detail(detail)
        if detail is not None:
            missing = [m.path.name for m in detail.media if not m.present]
            self.status_message.setText(f"{len(missing)} media file(s) missing: {', '.join(missing[:3])}"
                                        if missing else "")
            self.detailShown.emit(detail.id)

    def _report_error(self, exc: BaseException) -> None:
        text = str(exc) if isinstance(exc, ThinsliceError) else f"{type(exc).__name__}: {exc}"
        self.status_message.setText(text)

    # -- import ---------------------------------------------------------------------------------
    def import_backend(self) -> ImportBackend:
        from app.import_service import dry_run_report, run_import
        from storage.importers.common import MAP_FIELDS, ImportOptions
        from storage.importers.registry import detect_importer, importers

        def options(values: dict, token: CancelToken | None = None) -> ImportOptions:
            return ImportOptions(dataset_name=values["dataset_name"], mapping=values["mapping"],
                                 skip_bad=values["skip_bad"], should_cancel=token or (lambda: False))

        return ImportBackend(
            kinds=[(i.kind, i.title) for i in importers()],
            detect=lambda path: detect_importer(path).kind,
            dry_run=lambda kind, path, values: dry_run_report(kind, path, options(values)),
            run=lambda kind, path, values, token, progress: run_import(
                self.store, kind, path, options(values, token), progress).dataset,
            map_fields=MAP_FIELDS)

    def open_import(self) -> ImportDialog:
        dialog = ImportDialog(self.import_backend(), self.runner, self)
        dialog.imported.connect(self._imported)
        dialog.show()
        return dialog

    def _imported(self, dataset: str) -> None:
        self.status_message.setText(f"Imported {dataset}.")
        self.refresh_datasets()
        for index in range(self.dataset_combo.count()):
            if self.dataset_combo.itemText(index).startswith(dataset):
                self.dataset_combo.setCurrentIndex(index)
                break

    # -- annotator, layout, misc ----------------------------------------------------------------
    def _show_annotator(self, name: str) -> None:
        self.annotator_label.setText(f"annotator: {name or '(not set)'}  ")

    def _ask_annotator(self) -> None:
        from PySide6.QtWidgets import QInputDialog
        name, ok = QInputDialog.getText(self, "Annotator", "Your name, stamped on every edit:",
                                        text=self.session.annotator)
        if ok and name.strip():
            self.settings.setValue("annotator", name.strip())
            self.session.set_annotator(name.strip())

    def _about(self) -> None:
        QMessageBox.about(self, "About Thinslice",
                          "Thinslice: look inside social-intelligence benchmarks of multimodal models.\n"
                          f"Store: {self.store.path}")

    def _restore_layout(self) -> None:
        geometry = self.settings.value("geometry")
        state = self.settings.value("window_state")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        else:
            self.resize(1480, 900)
        if isinstance(state, QByteArray):
            self.restoreState(state)

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("window_state", self.saveState())
        self.settings.sync()
        self.runner.wait(5000)
        super().closeEvent(event)


def wait_until_idle(window: MainWindow, timeout_s: float = 20.0) -> None:
    """Process events until no worker is busy (for screenshots and the command line)."""
    from PySide6.QtCore import QCoreApplication, QElapsedTimer
    timer = QElapsedTimer()
    timer.start()
    idle_rounds = 0
    while timer.elapsed() < timeout_s * 1000 and idle_rounds < 5:
        QCoreApplication.processEvents()
        window.runner.wait(50)
        QCoreApplication.processEvents()
        idle_rounds = idle_rounds + 1 if not window.runner.busy() else 0


def screenshot(window: MainWindow, out: Path, stimulus_id: int | None = None) -> Path:
    """Render the window (with that stimulus selected) to a PNG."""
    window.show()
    wait_until_idle(window)
    if stimulus_id is not None:
        window.select_stimulus_id(stimulus_id)
        wait_until_idle(window)
    QTimer.singleShot(0, lambda: None)
    wait_until_idle(window)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    from PySide6.QtGui import QGuiApplication
    if QGuiApplication.platformName() == "xcb":
        screen = window.screen() or QGuiApplication.primaryScreen()
        pixmap = screen.grabWindow(0, window.x(), window.y(), window.frameGeometry().width(),
                                   window.frameGeometry().height())
    else:
        pixmap = window.grab()
    if not pixmap.save(str(out), "PNG"):
        raise ThinsliceError(f"Cannot write the screenshot {out}")
    return out
