"""The one window: filter and table on the left, the stimulus in the centre, what others said on the right."""
from __future__ import annotations

import getpass
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QEvent, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (QComboBox, QDockWidget, QFrame, QLabel, QMainWindow, QMessageBox, QScrollArea,
                               QSizePolicy, QTabBar, QToolBar, QVBoxLayout, QWidget)

from app import keymap as keys
from app.benchmarks.profile import Page
from app.changes import Change, ChangeChannel, Topic
from app.dashboard_cache import DashboardFrames
from app.keymap import default_keymap
from app.session import Session
from app.browser import Browser, StimulusInFull
from app.annotation_model import AnnotationModel
from storage.annotations import AnnotationStore
from storage.errors import ThinsliceError
from storage.records import StimulusDetail
from storage.store import Store
from widgets.change_relay import ChangeRelay
from widgets.compare_view import CompareView
from widgets.dock_layout import DefaultLayout, fitting_size, show_panel
from widgets.palette import colour
from widgets.failure_panel import FailurePanel
from widgets.agreement_panel import AgreementPanel
from widgets.filter_bar import FilterBarView
from widgets.help_overlay import HelpOverlay
from widgets.history_panel import HistoryPanel
from widgets.keys import KeyDispatcher, bind_shortcuts
from widgets.metrics_dashboard import MetricsDashboardView
from widgets.predictions_panel import PredictionsPanel
from widgets.presentation_view import RaceDesk
from widgets.media_page import MediaStimulusPage
from widgets.ncp_task_page import NcpTaskPage
from widgets.scene_annotations import SceneAnnotationsPanel
from widgets.store_menu import StoreBackups, StoreMenu
from widgets.scene_view import SceneView
from widgets.stimulus_table import StimulusTableModel, StimulusTableView
from widgets.stimulus_view import StimulusView
from widgets.import_dialog import ImportBackend, ImportDialog
from widgets.settings_store import SettingsStore
from widgets.tasks import CancelToken, TaskRunner
from widgets.team_dialog import TeamLink

if TYPE_CHECKING:
    from widgets.live_panel import LivePanel

MAX_COMPARED_MODELS = 4
# worker keys of the actions a user starts; one succeeding clears an error left from an earlier one
USER_ACTIONS = frozenset({"detail", "facets", "agreement", "annotation-import", "compare-traces"})


def _detail_traces(detail: StimulusDetail) -> list:
    """`app.ncp.detail_traces`, imported when the first NCP task is shown: the NCP rules bring polars and
    every benchmark's module, which the window's first paint does not need."""
    from app.ncp import detail_traces

    return detail_traces(detail)


def error_message(exc: BaseException) -> str:
    """One line for the status bar: a `ThinsliceError`'s own message; a file the system could not open as
    "name: what went wrong" instead of "[Errno 2] ..."; anything else named by its type."""
    if isinstance(exc, ThinsliceError):
        return str(exc)
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{Path(exc.filename).name}: " if exc.filename else ""
        return f"{where}{exc.strerror[:1].lower()}{exc.strerror[1:]}"
    return f"{type(exc).__name__}: {exc}"


class MainWindow(QMainWindow):
    """Wires the session, the store's queries (always on workers), the change channel, the keys and the views.

    `changes` is the one change channel: services are given it and publish what they wrote; the table
    (rows), filter bar (facets), dashboard (metrics), detail views (detail) and history (annotations)
    refresh from it. `keymap` is the one keymap; `keys` routes every key of it wherever focus is.
    """

    detailShown = Signal(int)        # stimulus id, after the detail area has been filled
    datasetsChanged = Signal()

    def __init__(self, store: Store, session: Session | None = None, settings: QSettings | None = None) -> None:
        super().__init__()
        self.store = store
        self.browser = Browser(store)
        self._dataset_names: dict[int, str] = {}   # as the last refresh read them
        self.session = session or Session()
        self.settings = settings or QSettings("Thinslice", "Thinslice")
        self.settings_store = SettingsStore(self.settings)
        self.changes = ChangeChannel()
        self.keymap = default_keymap()
        self.runner = TaskRunner(self, on_error=self.report_error)
        self.setWindowTitle(f"Thinslice — {store.path.name}")
        self.setObjectName("MainWindow")
        self.setDockNestingEnabled(True)

        self.dataset_combo = QComboBox()
        self.dataset_combo.setMinimumContentsLength(24)
        self.dataset_combo.setToolTip("Dataset")
        self.annotator_label = QLabel()
        self.filter_bar = FilterBarView()
        self.table_model = StimulusTableModel(self.runner, self.browser, self._kept_stimulus, self)
        self.table = StimulusTableView(self.table_model)
        self.stimulus_view = StimulusView()
        self.scene_view = SceneView()
        self.stimulus_view.register_page(Page.SCENE, self.scene_view)
        self.annotations = AnnotationStore(store)
        # the one way annotations and label sets are written; it publishes what it wrote on `changes`
        self.annotation_model = AnnotationModel(self.annotations, self.changes)
        # a scene's labels (on a role or a turn) have a model of their own: the scene page is not the media page
        self.scene_annotations = SceneAnnotationsPanel(AnnotationModel(self.annotations, self.changes), self.runner)
        self.scene_view.attach_annotations(self.scene_annotations)
        self.media_page = MediaStimulusPage(self.annotation_model, settings=self.settings_store)
        self.stimulus_view.register_page(Page.MEDIA, self.media_page, needs_height=True)
        self.ncp_page = NcpTaskPage(_detail_traces)
        self.stimulus_view.register_page(Page.TRACES, self.ncp_page)
        self.predictions = PredictionsPanel()
        self.status_message = QLabel()
        self.store_label = QLabel(f"store: {store.path.name}")
        self.store_label.setToolTip(str(store.path))

        self._build_toolbar()
        self._build_docks()
        self._build_analysis_docks()
        self._build_menus()
        self.audio_label = QLabel()
        self.audio_label.setStyleSheet(f"color: {colour('warning')};")
        # a long note is cut rather than widening the window past a laptop's screen (its tooltip has it all)
        self.audio_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.statusBar().addWidget(self.status_message, 1)
        self.statusBar().addPermanentWidget(self.audio_label)
        # a team project's session, and its word in the status bar (nothing for a local project)
        self.team = TeamLink(self.store, self.annotation_model, lambda name: self.session.set_annotator(name),
                             self.runner, self)
        self.statusBar().addPermanentWidget(self.team.label)
        self.statusBar().addPermanentWidget(self.store_label)

        self.dataset_combo.currentIndexChanged.connect(self._dataset_picked)
        self.filter_bar.filterChanged.connect(self.session.set_filter)
        self.table.stimulusSelected.connect(self.session.select_stimulus)
        self.table_model.idsLoaded.connect(self._ids_loaded)
        self.session.filter_changed.connect(lambda f: self.table_model.set_query(f, list(self.session.compared_models)))
        self.session.stimulus_changed.connect(self._load_detail)
        self.session.annotator_changed.connect(self._show_annotator)
        self.session.annotator_changed.connect(self.media_page.set_annotator)
        self.session.annotator_changed.connect(self.scene_annotations.set_annotator)
        self.scene_annotations.message.connect(self.show_status)
        self.media_page.statusMessage.connect(self.show_status)
        self.media_page.statusMessage.connect(lambda _m: self._show_audio_status())
        self._build_keys()
        self._listen_to_changes()

        # until the annotator says otherwise, edits are stamped with the login name, never left anonymous
        remembered = self.settings_store.load()
        self.session.set_annotator(remembered.annotator or getpass.getuser())
        self._show_annotator(self.session.annotator)
        self.media_page.set_annotator(self.session.annotator)
        self.scene_annotations.set_annotator(self.session.annotator)
        self._pending_select: int | None = None   # a stimulus to select when its dataset's table is shown
        self._finding_dataset_of: int | None = None   # a stimulus whose dataset is being looked up
        self._closed = False
        self._error_shown = False
        self.runner.on_success = self._work_succeeded
        self.refresh_datasets(prefer=remembered.last_dataset)
        self.default_layout = DefaultLayout(self, self._roomy_docks())
        self._restore_layout(remembered.geometry, remembered.window_state)
        self.default_layout.restored()

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

    def _build_analysis_docks(self) -> None:
        """Compare and Live beside the predictions; Metrics and Failures below, shown from the menus."""
        self.compare = CompareView()
        self._live: LivePanel | None = None  # built when its dock is first shown (see `live`)
        self._live_host = QWidget()
        QVBoxLayout(self._live_host).setContentsMargins(0, 0, 0, 0)
        # made before the views listen to the change channel, so it forgets a dataset's frames before they refresh
        self.dashboard_frames = DashboardFrames(self.store, self.changes)
        self.dashboard = MetricsDashboardView(loader=self.dashboard_frames.load, runner=self.runner)
        self.failures = FailurePanel(runner=self.runner)
        self.compare_dock = self._dock("Compare", "CompareDock", self.compare, Qt.DockWidgetArea.RightDockWidgetArea,
                                       scrollable=True)
        self.live_dock = self._dock("Live model", "LiveDock", self._live_host, Qt.DockWidgetArea.RightDockWidgetArea,
                                    scrollable=True)
        self.tabifyDockWidget(self.predictions_dock, self.compare_dock)
        self.tabifyDockWidget(self.compare_dock, self.live_dock)
        self.predictions_dock.raise_()
        self.metrics_dock = self._dock("Metrics", "MetricsDock", self.dashboard, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.failures_dock = self._dock("Failures", "FailuresDock", self.failures,
                                        Qt.DockWidgetArea.BottomDockWidgetArea, scrollable=True)
        self.history = HistoryPanel()
        self.history_dock = self._dock("Annotation history", "HistoryDock", self.history,
                                       Qt.DockWidgetArea.RightDockWidgetArea)
        self.tabifyDockWidget(self.live_dock, self.history_dock)
        self.agreement = AgreementPanel()
        self.agreement_dock = self._dock("Agreement", "AgreementDock", self.agreement,
                                         Qt.DockWidgetArea.BottomDockWidgetArea, scrollable=True)
        self.agreement_dock.hide()
        self.agreement.computeRequested.connect(self._compute_agreement)
        self.agreement.jumpRequested.connect(self._jump_to)
        self.session.dataset_changed.connect(lambda _id: self._agreement_dataset_changed())
        self.history.seekRequested.connect(self.media_page.player.clock.seek)
        self.predictions_dock.raise_()
        # hidden until asked for; tabified when both are shown (a hidden tab group leaves an empty tab bar)
        self.metrics_dock.hide()
        self.failures_dock.hide()
        self.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.resizeDocks([self.stimuli_dock, self.predictions_dock], [480, 400], Qt.Orientation.Horizontal)
        self.compare.comparedModelsChanged.connect(self.session.set_compared_models)
        self.session.compared_models_changed.connect(self.compare.set_compared_models)
        self.compare.tracesWanted.connect(self._compare_traces)
        self.compare.nextStimulusRequested.connect(lambda: self.move_selection(1))
        # a presentation races the contenders through the one write path for live results
        self.compare.race_desk = RaceDesk(self._race_service, self.settings_store, self.runner)
        self.compare.previousStimulusRequested.connect(lambda: self.move_selection(-1))
        self.dashboard.framesLoaded.connect(self.failures.set_frames)
        self.dashboard.drillDown.connect(self.drill_down)
        self.failures.drillDown.connect(self.drill_down)
        for view in (self.dashboard, self.failures):
            view.statusMessage.connect(self.show_status)
        self.live_dock.visibilityChanged.connect(self._live_dock_shown)
        # a stored live answer (a batch's too) reaches the table, facets, dashboard and detail through the
        # change channel the service publishes on (see _changed)
        self.table_model.idsLoaded.connect(lambda _n: self._send_batch_ids())
        # the dashboard's frames hold a dataset's predictions: computed only while it or the failures are shown
        self._dashboard_for: int | None = None
        for dock in (self.metrics_dock, self.failures_dock):
            dock.visibilityChanged.connect(lambda shown: shown and self._refresh_dashboard(stale_only=True))

    @property
    def live(self) -> LivePanel:
        """The live-model panel, built when its dock is first shown or it is first asked for: its client,
        prompts and the benchmarks' rules behind them are not needed for the window's first paint."""
        return self._live if self._live is not None else self._build_live()

    def _build_live(self) -> LivePanel:
        from app.live.service import LiveService
        from widgets.live_panel import LivePanel

        self._live = LivePanel(LiveService(self.store, self.changes), settings=self.settings_store, runner=self.runner)
        self._live.statusMessage.connect(self.show_status)
        self._live_host.layout().addWidget(self._live)
        self._send_batch_ids()
        self._live.set_detail(self.stimulus_view.detail)
        return self._live

    def _send_batch_ids(self) -> None:
        """The live panel's batch is the table's stimuli; their ids are read (on a worker) only once it exists."""
        if self._live is None:
            return
        live, f = self._live, self.table_model.filter
        key, desc = self.table_model.sort_key, self.table_model.descending
        self.runner.submit("live-batch-ids", lambda: [int(i) for i in self.browser.stimulus_ids(f, key, desc)],
                           live.set_batch_ids)

    def _refresh_dashboard(self, stale_only: bool = False) -> None:
        """Compute the dashboard of the shown dataset if the Metrics or Failures panel is in view (else when
        one is next shown); `stale_only` leaves one already computed for this dataset as it is."""
        dataset_id = self.session.dataset_id
        if stale_only and dataset_id == self._dashboard_for:
            return
        if self.metrics_dock.isVisible() or self.failures_dock.isVisible():
            self._dashboard_for = dataset_id
            self.dashboard.set_dataset(dataset_id)
        else:
            self._dashboard_for = None

    def _race_service(self):
        from app.live.service import LiveService

        return LiveService(self.store, self.changes)

    def _live_dock_shown(self, shown: bool) -> None:
        if shown and self._live is None and self.isVisible():
            self._build_live()

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea,
              scrollable: bool = False) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        if scrollable:
            # a panel with many controls scrolls inside a narrow dock instead of forcing the window wider
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QFrame.Shape.NoFrame)
            scroll.setWidget(widget)
            widget = scroll
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                         | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, dock)
        return dock

    def _menu_action(self, text: str, slot, action_id: str | None = None) -> QAction:
        """A menu item; its keys, if any, come from the keymap."""
        action = QAction(text, self)
        action.triggered.connect(lambda _checked=False: slot())  # `checked` must not reach the slot
        if action_id is not None:
            bind_shortcuts(action, self.keymap, action_id)
        return action

    def _open_cues(self) -> None:
        from widgets.cues_view import open_cues_dock  # the cues' statistics are imported when first asked for
        open_cues_dock(self)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.import_action = self._menu_action("&Import…", self.open_import, keys.IMPORT)
        file_menu.addAction(self.import_action)
        file_menu.addSeparator()
        self.store_menu = StoreMenu(self, file_menu, self.settings, self.store.path)
        self.store_backups = StoreBackups(self, file_menu, self.settings, self.store, self.runner, self.show_status,
                                          self.report_error)
        self.team_action = self._menu_action("&Team…", lambda: self.team.open_dialog(self))
        file_menu.addAction(self.team_action)
        file_menu.addSeparator()
        self.quit_action = self._menu_action("&Quit", self.close, keys.QUIT)
        file_menu.addAction(self.quit_action)
        self.file_menu = file_menu
        view = self.menuBar().addMenu("&View")
        for dock in (self.stimuli_dock, self.predictions_dock, self.compare_dock, self.live_dock,
                     self.history_dock, self.metrics_dock, self.failures_dock, self.agreement_dock):
            view.addAction(dock.toggleViewAction())
        view.addSeparator()
        view.addAction(self._menu_action("&Find…", self.focus_search, keys.SEARCH))
        view.addAction(self._menu_action("&Reset layout", self.reset_layout))
        self.view_menu = view
        self.annotate_menu = self.menuBar().addMenu("&Annotate")
        self.annotate_menu.addAction(self._menu_action("Set &annotator name…", self._ask_annotator))
        # they drive the annotation model's history of the stimulus on screen (never another's)
        self.undo_action, self.redo_action = self.media_page.annotation.undo_actions(self)
        bind_shortcuts(self.undo_action, self.keymap, keys.UNDO)
        bind_shortcuts(self.redo_action, self.keymap, keys.REDO)
        self.annotate_menu.addActions([self.undo_action, self.redo_action])
        self.annotate_menu.addSeparator()
        self.annotate_menu.addAction(self._menu_action("&Label sets…", self.open_label_sets))
        self.annotate_menu.addAction(self._menu_action("Annotation &history", lambda: self.show_dock(self.history_dock)))
        self.annotate_menu.addAction(self._menu_action("A&greement between annotators", self._show_agreement,
                                                       keys.AGREEMENT))
        self.annotate_menu.addAction(self._menu_action("&Export annotations…", self.open_export, keys.EXPORT))
        self.annotate_menu.addAction(self._menu_action("&Import annotations…", self.open_annotation_import))
        self.compare_menu = self.menuBar().addMenu("&Compare")
        self.compare_menu.addAction(self._menu_action("&Compare models on this stimulus",
                                                      lambda: self.show_dock(self.compare_dock), keys.COMPARE))
        self.present_action = self._menu_action("&Presentation mode", self.present, keys.PRESENT)
        self.compare_menu.addAction(self.present_action)
        self.compare_menu.addAction(self._menu_action("&Metrics dashboard", lambda: self.show_dock(self.metrics_dock),
                                                      keys.METRICS))
        self.compare_menu.addAction(self._menu_action("&Failure mining", lambda: self.show_dock(self.failures_dock),
                                                      keys.FAILURES))
        self.compare_menu.addAction(self._menu_action("Ask a &live model", lambda: self.show_dock(self.live_dock),
                                                      keys.LIVE))
        self.compare_menu.addAction(self._menu_action("Voice and turn-taking &cues", self._open_cues))
        self.compare_menu.addSeparator()
        self.compare_menu.addAction(self._menu_action("Show &all stimuli (clear drill-down)", self.filter_bar.reset))
        self.help_menu = self.menuBar().addMenu("&Help")
        self.help_action = self._menu_action("&Keyboard shortcuts", self.toggle_help, keys.HELP)
        self.help_menu.addAction(self.help_action)
        self.help_menu.addAction(self._menu_action("&About Thinslice", self._about))

    def _build_keys(self) -> None:
        """Every key of the keymap, from wherever focus is: page keys by the dispatcher, the rest by the menus."""
        self.help_overlay = HelpOverlay(self.keymap, self)
        self.keys = KeyDispatcher(self, self.keymap, self._key_contexts)
        self.keys.overlay = self.help_overlay
        self.keys.register_all(self.media_page.actions())
        self.keys.register_all(self.ncp_page.stepper.actions())
        self.keys.label_handler = self.media_page.press_label
        self.keys.label_release_handler = self.media_page.release_label
        self.keys.label_point_handler = self.media_page.point_label
        # how label keys mark while playing is remembered beside the palette's other view settings
        palette = self.media_page.annotation.palette
        palette.set_key_mode(self.settings_store.load().label_key_mode)
        palette.keyModeChanged.connect(lambda mode: self.settings_store.update(label_key_mode=mode))
        self.media_page.player.helpRequested.connect(self.toggle_help)
        self.media_page.annotation.palette.currentLabelChanged.connect(lambda *_: self._sync_label_keys())
        self.stimulus_view.pages.currentChanged.connect(lambda _index: self._sync_label_keys())
        self._sync_label_keys()

    def _key_contexts(self) -> tuple[str, ...]:
        page = self.stimulus_view.current_page()
        if page is self.media_page:
            return (keys.MEDIA,)
        if page is self.ncp_page and self.ncp_page.stepper.step_count() > 0:
            return (keys.STEPPER,)
        return ()

    def _sync_label_keys(self) -> None:
        """The active label set's keys are in the keymap (and its list) while a clip is shown, only then."""
        if self.stimulus_view.current_page() is self.media_page:
            self.keymap.set_labels(*self.media_page.label_shortcuts())
        else:
            self.keymap.set_labels("", [])

    def toggle_help(self) -> None:
        """Show or hide the list of every key (F1, ?, Help > Keyboard shortcuts, the player's ? button)."""
        self._sync_label_keys()
        self.help_overlay.toggle()

    def present(self) -> None:
        """Present the current comparison full screen; Escape or F5 there leaves."""
        self.compare.enter_presentation(full_screen=True, player=self.media_page.player)

    # -- datasets ------------------------------------------------------------------------------
    def refresh_datasets(self, prefer: str | None = None) -> None:
        datasets = self.browser.datasets()
        self._dataset_names = {ds.id: ds.name for ds in datasets}
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
            self.show_status("The store has no datasets yet: File > Import.")

    def select_dataset(self, name: str) -> bool:
        """Show the dataset of that name (the list marks synthetic ones, so it is found by id, not by text)."""
        ids = [i for i, known in self._dataset_names.items() if known == name]
        index = self.dataset_combo.findData(ids[0]) if ids else self.dataset_combo.findText(name)
        if index < 0:
            return False
        self.dataset_combo.setCurrentIndex(index)
        return True

    def _dataset_picked(self, index: int) -> None:
        dataset_id = self.dataset_combo.itemData(index)
        if dataset_id is None:
            return
        self.settings_store.update(last_dataset=self.dataset_combo.currentText())
        # the facets scan the dataset's stimuli and runs: a worker reads them, then the dataset is shown
        self.runner.submit("facets", lambda: self.browser.facets(dataset_id),
                           lambda facets: self._show_dataset(dataset_id, facets))

    def _show_dataset(self, dataset_id: int, facets: dict[str, list[str]]) -> None:
        self.filter_bar.set_facets(facets)
        self.compare.set_available_models(facets["model"])
        self.session.set_compared_models(tuple(facets["model"][:MAX_COMPARED_MODELS]))
        self.session.set_dataset(dataset_id)
        self._refresh_dashboard()

    # -- table and detail -----------------------------------------------------------------------
    def _kept_stimulus(self) -> int | None:
        """The stimulus a reloaded table keeps selected: the one asked for, else the one shown."""
        return self._pending_select if self._pending_select is not None else self.session.stimulus_id

    def _ids_loaded(self, count: int) -> None:
        self.filter_bar.set_count(count)
        if not self._table_is_current():
            return   # the table of a dataset no longer chosen: the chosen one's table follows and selects
        target = self._pending_select if self._pending_select is not None else self.session.stimulus_id
        if target is not None and self.table.select_stimulus(target):
            self._pending_select = None
            return
        if target is not None and target == self._finding_dataset_of:
            return   # its dataset is being looked up; that dataset's table selects it
        self._pending_select = None
        if count:
            self.table.selectRow(0)
        else:
            self.session.select_stimulus(None)

    def select_stimulus_id(self, stimulus_id: int) -> None:
        """Select a stimulus by store id (from the command line, a chart or a failure list). A stimulus of
        another dataset brings its dataset into the table, and is selected once that table is shown."""
        if self._table_is_current() and self.table.select_stimulus(stimulus_id):
            return
        self._pending_select = stimulus_id
        self._finding_dataset_of = stimulus_id
        self.session.select_stimulus(stimulus_id)
        self.runner.submit("jump: dataset", lambda: self.browser.dataset_of(stimulus_id),
                           lambda name: self._follow_into(stimulus_id, name))

    def _table_is_current(self) -> bool:
        """Whether the table shows the chosen dataset's rows for the latest filter (no newer table is coming)."""
        return self.table_model.settled() and self.table_model.filter.dataset_id == self.dataset_combo.currentData()

    def _follow_into(self, stimulus_id: int, dataset: str | None) -> None:
        if self._finding_dataset_of != stimulus_id:
            return   # a later jump superseded this one
        self._finding_dataset_of = None
        if self._pending_select != stimulus_id:
            return
        if dataset is None:
            self._pending_select = None   # no such stimulus: the table keeps what it shows
        elif dataset != self._dataset_names.get(self.dataset_combo.currentData()):
            self.select_dataset(dataset)   # its table, once shown, selects it
        elif self._table_is_current():
            self.table.find_stimulus(stimulus_id)   # its row may be past the pages the table holds

    def _load_detail(self, stimulus_id: int | None) -> None:
        if stimulus_id is None:
            self._show_detail(None)
            return
        def load() -> StimulusInFull | None:
            return self.browser.stimulus_in_full(stimulus_id, len(self.annotations.for_stimulus(stimulus_id)))

        self.runner.submit("detail", load, self._show_detail)

    def _show_detail(self, shown: StimulusInFull | None) -> None:
        detail, response_audio = (shown.detail, shown.response_audio) if shown is not None else (None, {})
        self.stimulus_view.set_detail(detail)
        self.predictions.set_detail(detail)
        self.compare.set_detail(detail, response_audio)
        if self._live is not None:
            self._live.set_detail(detail)
        if detail is not None:
            missing = [m.path.name for m in detail.media if not m.present]
            self.show_status(f"{len(missing)} media file(s) missing: {', '.join(missing[:3])}" if missing else "")
            self._show_audio_status()
            self._annotations_changed(detail.id)  # the history dock shows the selected stimulus's edits
            self.detailShown.emit(detail.id)

    def _show_audio_status(self) -> None:
        """The audio output's state stays in view (e.g. no output device: the clock runs silently) while a
        page that plays is shown, and only then."""
        playing_page = self.stimulus_view.current_page() is self.media_page
        status = (self.media_page.player.audio_status or "") if playing_page else ""
        self.audio_label.setText(f"audio: {status}" if status else "")
        self.audio_label.setToolTip(status)

    def move_selection(self, delta: int) -> None:
        """Select the stimulus `delta` rows away (presentation mode's next and previous)."""
        current = self.table.currentIndex().row()
        row = max(0, min(self.table_model.rowCount() - 1, current + delta))
        if row != current:
            self.table.selectRow(row)

    def drill_down(self, stimulus_ids: list, description: str) -> None:
        """Show only these stimuli (from a chart, a failure filter or a slice)."""
        self.session.set_filter(replace(self.session.filter, stimulus_ids=tuple(int(i) for i in stimulus_ids)))
        self.filter_bar.set_drill_down(f"{description} ({len(stimulus_ids)})")
        self.show_status(f"Showing {len(stimulus_ids)} stimuli: {description}")

    def _roomy_docks(self) -> list[QDockWidget]:
        return [self.metrics_dock, self.failures_dock, self.agreement_dock]

    def show_dock(self, dock: QDockWidget) -> None:
        show_panel(self, dock, self._roomy_docks())

    def focus_search(self) -> None:
        """Ctrl+F: the stimuli panel in view and the cursor in its search box, its text selected to retype."""
        self.stimuli_dock.show()
        self.stimuli_dock.raise_()
        self.filter_bar.text.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter_bar.text.selectAll()

    def reset_layout(self) -> None:
        """View > Reset layout: every panel where a new window has it, at the default size."""
        self.default_layout.reset()

    def _compare_traces(self, stimulus_id: int, models: tuple) -> None:
        self.runner.submit("compare-traces", lambda: self.browser.traces(stimulus_id, list(models)),
                           self.compare.set_traces)

    def report_error(self, exc: BaseException) -> None:
        """The one way an error reaches the user: its one-line message in the status bar, until the next
        action succeeds. A `ThinsliceError` already says file, place, what was found and what was expected;
        anything else is named by its type."""
        text = error_message(exc)
        self.status_message.setStyleSheet("color: #c62828;")
        self.status_message.setText(text)
        self._error_shown = True

    def show_status(self, text: str) -> None:
        """A message for the status bar; it replaces whatever error was there."""
        self.status_message.setStyleSheet("")
        self.status_message.setText(text)
        self._error_shown = False

    def _work_succeeded(self, key: str) -> None:
        # the user has moved on (another stimulus, dataset or analysis): an error about the last one is stale
        if self._error_shown and key in USER_ACTIONS:
            self.show_status("")

    # -- import ---------------------------------------------------------------------------------
    def import_backend(self) -> ImportBackend:
        from app.attach_service import attach_dataset
        from app.import_service import attach_offer, dry_run_report, run_import, table_preview
        from storage.importers.common import MAP_FIELDS, ImportOptions
        from storage.importers.registry import detect_importer, importers

        def options(values: dict, token: CancelToken | None = None) -> ImportOptions:
            return ImportOptions(dataset_name=values["dataset_name"], mapping=values["mapping"],
                                 skip_bad=values["skip_bad"], should_cancel=token or (lambda: False),
                                 extra=dict(values.get("extra") or {}),
                                 replace_stimuli=bool(values.get("replace_stimuli")))

        return ImportBackend(
            kinds=[(i.kind, i.title) for i in importers()],
            detect=lambda path: detect_importer(path).kind,
            dry_run=lambda kind, path, values: dry_run_report(kind, path, options(values), store=self.store),
            run=lambda kind, path, values, token, progress: run_import(
                self.store, kind, path, options(values, token), progress, self.changes),
            map_fields=MAP_FIELDS,
            preview=lambda path, values: table_preview(path, options(values)),
            attach_offer=lambda kind, path, values: attach_offer(self.store, kind, path, options(values)),
            attach_in_place=lambda path, values, token, progress: attach_dataset(
                self.store, path, values["dataset_name"], values["mapping"] or None, progress, self.changes,
                token).dataset)

    def open_import(self) -> ImportDialog:
        dialog = ImportDialog(self.import_backend(), self.runner, self)
        dialog.imported.connect(self._imported)
        dialog.show()
        return dialog

    def _imported(self, dataset: str, said: str = "") -> None:
        # the import service has said the datasets changed (the list and the open dataset's views reload)
        self.show_status(f"Imported {dataset}: {said}." if said else f"Imported {dataset}.")
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
            self.settings_store.update(annotator=name.strip())
            self.session.set_annotator(name.strip())

    def _about(self) -> None:
        QMessageBox.about(self, "About Thinslice",
                          "Thinslice: look inside social-intelligence benchmarks of multimodal models.\n"
                          f"Store: {self.store.path}")

    def _restore_layout(self, geometry: bytes | None, state: bytes | None) -> None:
        if geometry is None or not self.restoreGeometry(QByteArray(geometry)):
            self.resize(fitting_size(self))
        if state is not None:
            self.restoreState(QByteArray(state))

    def label_set_in_use(self) -> str | None:
        """The label set the shown page labels with: a scene's own for an AgentViSS scene, else the media page's."""
        page = self.stimulus_view.current_page()
        combo = (self.scene_annotations if page is self.scene_view else self.media_page.annotation).label_set
        return combo.currentText() or None

    def open_label_sets(self) -> None:
        from widgets.label_set_editor import LabelSetEditorDialog
        dialog = LabelSetEditorDialog(self.annotation_model, self, keymap=self.keymap, current=self.label_set_in_use())
        dialog.labelSetsChanged.connect(self.media_page.annotation.reload_label_sets)
        dialog.show()

    def _show_agreement(self) -> None:
        self.show_dock(self.agreement_dock)
        self._offer_agreement_sets()

    def _agreement_dataset_changed(self) -> None:
        """Another dataset: the figures were about the last one, and the set to open on may differ."""
        self.agreement.show_error("")
        if self.agreement_dock.isVisible():
            self._offer_agreement_sets()

    def _offer_agreement_sets(self) -> None:
        """Offer every label set, at once on the one in use; once the worker has counted the dataset's labels,
        on the one in use when the dataset has labels in it, else on the one with most."""
        dataset_id, in_use = self.session.dataset_id, self.label_set_in_use()
        sets = [(ls.name, ls.scope) for ls in self.annotations.label_sets()]

        def count() -> dict[str, int]:
            found = self.annotations.for_stimuli(dataset_id=dataset_id) if dataset_id is not None else []
            return dict(Counter(a.label_set for a in found))

        self.agreement.set_label_sets(sets, None, in_use)
        offered = self.agreement.label_set.currentText()

        def counted(counts: dict[str, int]) -> None:
            if self.agreement.label_set.currentText() == offered:   # unless the user chose a set meanwhile
                self.agreement.set_label_sets(sets, counts, in_use)

        self.runner.submit("agreement-sets", count, counted)

    def _compute_agreement(self, label_set: str, scope: str, grid_s: float) -> None:
        from app.agreement import agreement_for
        dataset_id = self.session.dataset_id
        if dataset_id is None:
            self.agreement.show_error("Agreement: choose a dataset first (the toolbar's Dataset list).")
            return

        def work():
            ids, names = self.browser.dataset_stimuli(dataset_id)
            return agreement_for(self.annotations, ids, label_set, scope=scope, grid_s=grid_s), names

        self.runner.submit("agreement", work, lambda result: self.agreement.set_report(*result),
                           lambda exc: self.agreement.show_error(str(exc)))

    def _jump_to(self, stimulus_id: int, t: float) -> None:
        self.select_stimulus_id(stimulus_id)
        self.media_page.player.clock.seek(t)

    def open_export(self):
        from widgets.export_dialog import ExportDialog
        dialog = ExportDialog(self._export_backend(), self.runner, self)
        dialog.exported.connect(lambda path: self.show_status(f"Exported annotations to {path}"))
        dialog.show()
        return dialog

    def open_annotation_import(self) -> None:
        from PySide6.QtWidgets import QFileDialog
        from storage.exporters.registry import read_suffixes
        # what the dialog shows first; any file can be chosen, since the reader is picked by the file's content
        shown = "Annotations (" + " ".join(f"*{suffix}" for suffix in read_suffixes()) + ");;All files (*)"
        path, _ = QFileDialog.getOpenFileName(self, "Import annotations", "", shown)
        if path:
            self.import_annotation_file(Path(path))

    def import_annotation_file(self, path: Path):
        """Read an annotation file in any format Thinslice reads (recognised by its content, whatever its
        name) into the current dataset (a per-recording file goes to the selected stimulus): read on a worker,
        then added through the annotation model (one undo step per stimulus). A dialog asks whether to skip,
        clip or cancel what the reader refuses that way, then shows what was read, written and left out per
        tier; the status bar says the result. Returns the dialog, or None without a dataset."""
        from app.annotation_files import read_annotation_file
        from app.export_service import land_reading
        from storage.exporters.registry import detect_format
        from widgets.transfer_report_dialog import TransferDialog, labels
        if self.session.dataset_id is None:
            self.show_status(f"{path.name}: choose the dataset its labels belong to first")
            return None
        dataset = self._dataset_names.get(self.session.dataset_id)
        selected = self.stimulus_view.detail.external_id if self.stimulus_view.detail else None
        annotator = self.session.annotator

        def read(choice):
            reader = detect_format(path)
            # a per-recording file (ELAN, Praat, Audacity) is the selected stimulus's; a table names its stimuli
            current = selected if reader.per_stimulus else None
            return read_annotation_file(self.annotations, reader.name, path, dataset, annotator, None, current,
                                        clip=choice.clip, skip_unrepresentable=choice.skip_unrepresentable,
                                        skip_outside=choice.skip_outside)

        def land(reading):
            count = len(land_reading(self.annotation_model, reading, path.name))
            said = (f"Imported {labels(count)} from {path.name}" if count else
                    f"{path.name}: every label is already in the store; nothing was added")
            self.show_status(said)
            return said, reading.report

        dialog = TransferDialog(f"Import annotations from {path.name}", "import", self.runner, "annotation-import", self)
        dialog.panel.failed.connect(self.show_status)
        dialog.panel.start(read, land)
        dialog.show()
        return dialog

    def _export_backend(self):
        from app.export_service import export_annotations
        from storage.exporters.registry import exporters
        from widgets.export_dialog import ExportBackend
        name = self.dataset_combo.currentText()
        dataset = self._dataset_names.get(self.session.dataset_id) if self.session.dataset_id else None
        return ExportBackend(formats=[(e.name, e.extension) for e in exporters()], dataset=dataset or name,
                             annotators=[a for a in self.annotations.annotators()],
                             export=lambda fmt, out, annotator, skip: export_annotations(
                                 self.store, fmt, out, dataset=dataset, annotator=annotator or None,
                                 skip_unrepresentable=skip))

    def _annotations_changed(self, stimulus_id: int) -> None:
        """After an edit (or on selection): the history dock and the header's count, read on a worker."""
        def read():
            model = self.annotation_model
            return model.history(stimulus_id), len(model.read(stimulus_id))

        def show(result) -> None:
            events, count = result
            if stimulus_id != self.session.stimulus_id:
                return
            self.history.set_events(events)
            self.stimulus_view.set_annotation_count(count)

        self.runner.submit("annotations", read, show)

    # -- the change channel ----------------------------------------------------------------------
    def _listen_to_changes(self) -> None:
        self.change_relay = ChangeRelay(self.changes, tuple(Topic), self)
        self.change_relay.changed.connect(self._changed)

    def _changed(self, change: Change) -> None:
        """Refresh exactly the views that show what a service says it changed."""
        if self._closed:
            return
        dataset_id = self.session.dataset_id
        this_dataset = change.dataset_id is None or change.dataset_id == dataset_id
        shown = self.session.stimulus_id
        this_stimulus = shown is not None and (not change.stimulus_ids or shown in change.stimulus_ids)
        if change.concerns(Topic.DATASETS):
            self.refresh_datasets()
            return  # a new dataset list reloads the table, facets and dashboard itself
        if this_dataset and dataset_id is not None:
            if change.concerns(Topic.ROWS):
                self.table_model.reload()  # the ids, then the visible pages; the selection is kept
            if change.concerns(Topic.FACETS):
                self.runner.submit("facets-refresh", lambda: self.browser.facets(dataset_id),
                                   self._facets_refreshed)
            if change.concerns(Topic.METRICS):
                self._refresh_dashboard()
        if this_stimulus and change.concerns(Topic.DETAIL):
            self._load_detail(shown)
        if this_stimulus and change.concerns(Topic.ANNOTATIONS):
            self._annotations_changed(shown)
        if change.concerns(Topic.LABEL_SETS):
            self.media_page.annotation.reload_label_sets()

    def _facets_refreshed(self, facets: dict[str, list[str]]) -> None:
        self.filter_bar.update_facets(facets)
        self.compare.set_available_models(facets["model"])

    def childEvent(self, event) -> None:  # noqa: N802 (Qt name)
        # the tab bars of docks sharing a place are made by Qt as docks are tabified or restored: their names
        # are shown whole, with scroll arrows when they do not fit, not cut to "Pred…" and "Co…"
        super().childEvent(event)
        child = event.child()
        if event.type() == QEvent.Type.ChildPolished and isinstance(child, QTabBar):
            child.setElideMode(Qt.TextElideMode.ElideNone)
            child.setUsesScrollButtons(True)

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if self._closed:
            super().closeEvent(event)
            return
        self._closed = True
        self.store_backups.close()
        self.team.stop()
        self.change_relay.close()
        self.dashboard_frames.close()
        self.runner.close()
        self.help_overlay.hide()
        if self.compare.presentation is not None:
            self.compare.presentation.leave()  # the videos go back to the player before it is shut down
        self.media_page.shutdown()
        self.settings_store.update(geometry=self.saveGeometry().data(), window_state=self.saveState().data())
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
        busy = window.runner.busy() or window.media_page.busy()
        idle_rounds = idle_rounds + 1 if not busy else 0


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
