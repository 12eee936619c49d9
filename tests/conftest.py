"""Shared test set-up: offscreen Qt, isolated settings, no proxies, headless media."""
from __future__ import annotations

import ast
import importlib.abc
import os
import sys
from pathlib import Path

# Must happen before any QApplication exists: without a display the run would abort.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
for _var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
    os.environ.pop(_var, None)
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# THINSLICE_TEST_PART splits the suite the way the README's test command runs it: "core" runs the Qt-free tests in
# an interpreter where Qt, pyqtgraph and libVLC cannot be imported (so the core provably needs none of them), "gui"
# runs the rest; unset runs everything.
TEST_PART = os.environ.get("THINSLICE_TEST_PART", "")
QT_PACKAGES = ("PySide6", "shiboken6", "pyqtgraph", "vlc", "pytestqt", "widgets")


class _QtBlocker(importlib.abc.MetaPathFinder):
    """Makes every Qt-side package unimportable, as if it were not installed."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in QT_PACKAGES:
            raise ModuleNotFoundError(f"No module named {fullname!r} (blocked in the Qt-free test run)")
        return None


if TEST_PART == "core":
    sys.meta_path.insert(0, _QtBlocker())


def module_needs_qt(path: Path) -> bool:
    """True when a test module imports a Qt-side package or asks for the qtbot fixture."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in QT_PACKAGES for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in QT_PACKAGES:
            return True
        if isinstance(node, ast.arg) and node.arg == "qtbot":
            return True
    return False


def pytest_ignore_collect(collection_path, config):
    if TEST_PART not in ("core", "gui") or collection_path.suffix != ".py" \
            or not collection_path.name.startswith("test_"):
        return None
    return module_needs_qt(collection_path) == (TEST_PART == "core")


import pytest  # noqa: E402
from hypothesis import settings as hypothesis_settings  # noqa: E402

# the same examples on every run, so a red CI run can be reproduced exactly
hypothesis_settings.register_profile("thinslice", derandomize=True, database=None, deadline=None)
hypothesis_settings.load_profile("thinslice")

# The real samples the golden tests compare with: THINSLICE_REFERENCE_DATA names their folder, by default the
# project's shared reference data beside the clone. Without it those tests skip, and the summary says so.
REFERENCE_DATA = Path(os.environ.get("THINSLICE_REFERENCE_DATA") or ROOT.parent / "shared" / "reference-data")
REFERENCE_SKIP = "reference data not present"
# whether a test's own body failed: its traceback then still holds the test's windows, so they are not checked
CALL_FAILED = pytest.StashKey[bool]()


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path, monkeypatch):
    """Each test gets its own settings file and data folder, so nothing leaks between tests, nor into the
    user's own settings: a window process a test starts finds its settings through XDG_CONFIG_HOME."""
    monkeypatch.setenv("THINSLICE_HOME", str(tmp_path / "thinslice-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    try:
        from PySide6.QtCore import QSettings
    except ImportError:  # Qt-free test runs
        yield
        return
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    yield


@pytest.fixture(autouse=True)
def _widgets_live_until_closed(request):
    """Keeps each widget a test hands to `qtbot.addWidget` referenced until pytest-qt has closed it.

    pytest-qt holds those widgets only weakly. A window made in a test has no parent, so Python owns it,
    and its wrapper usually sits in a reference cycle (a dict of its own bound methods, say): once the
    test body returns, the cycle collector frees it whenever it next runs. pytest-qt processes events
    after every test, so that was often in the middle of Qt painting the window, which then deleted
    itself under its own paint event ("QPaintDevice: Cannot destroy paint device that is being painted",
    then a segmentation fault in whatever paint call came next).
    """
    if "qtbot" not in request.fixturenames:
        yield
        return
    qtbot = request.getfixturevalue("qtbot")
    register = qtbot.addWidget
    kept = []

    def add_and_keep(widget, **kwargs):
        kept.append(widget)
        register(widget, **kwargs)

    qtbot.addWidget = add_and_keep
    yield
    kept.clear()  # pytest-qt has closed them by now; a closed window is never painted


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_teardown(item):
    """Before pytest-qt closes a test's widgets: forget those the application already deleted itself
    (a presentation that left on Escape), which are still referenced now but have nothing to close."""
    registered = getattr(item, "qt_widgets", None)
    if registered:
        import shiboken6
        item.qt_widgets = [(ref, before_close) for ref, before_close in registered
                           if ref() is None or shiboken6.isValid(ref())]
    yield


@pytest.fixture
def reference_data() -> Path:
    if not REFERENCE_DATA.exists():
        pytest.skip(f"{REFERENCE_SKIP} (looked in {REFERENCE_DATA})")
    return REFERENCE_DATA


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # a test of the reference data skips either in its fixture or, when its cases come from the data, for want
    # of any case: both are marked, so the summary counts them together
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.stash[CALL_FAILED] = report.failed
    if report.skipped and "reference_data" in getattr(item, "fixturenames", ()) and not REFERENCE_DATA.exists():
        report.user_properties.append(("skipped_for", REFERENCE_SKIP))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """One line saying how many tests skipped for want of the reference data, and how to give it."""
    wanting = [report for report in terminalreporter.stats.get("skipped", [])
               if ("skipped_for", REFERENCE_SKIP) in getattr(report, "user_properties", ())]
    if wanting:
        terminalreporter.write_line(f"{len(wanting)} tests skipped: {REFERENCE_SKIP} at {REFERENCE_DATA} "
                                    "(set THINSLICE_REFERENCE_DATA to its folder to run them)")


def _describe(holder: object) -> str:
    """What holds a leaked window, in a word a reader can search for."""
    import types
    if isinstance(holder, types.MethodType):
        return f"bound method {holder.__func__.__qualname__}"
    if isinstance(holder, types.FunctionType):
        return f"function {holder.__module__}.{holder.__qualname__}"
    if isinstance(holder, dict):
        return f"dict with keys {sorted(map(str, holder))[:6]}"
    return type(holder).__qualname__


def _outside_holders(obj: object) -> list[object]:
    """The objects referring to `obj` that `obj` cannot itself reach: what keeps it alive from outside, rather
    than the cycles of its own bound methods and children (which the collector frees on their own)."""
    import gc
    import types
    own, todo = {id(obj)}, [obj]
    while todo:
        for ref in gc.get_referents(todo.pop()):
            # a module, class or function leads to every global: they are roots, not parts of the window
            if id(ref) not in own and not isinstance(ref, (types.ModuleType, type, types.FunctionType)):
                own.add(id(ref))
                todo.append(ref)
    return [holder for holder in gc.get_referrers(obj) if id(holder) not in own]


def _forget_test_values(item, windows: list) -> None:
    """Drops pytest's own record of the fixture values the test was given (pytest clears it only after every
    fixture is torn down): a `window` fixture's value is one of these windows, and the test is over."""
    for name, value in list((getattr(item, "funcargs", None) or {}).items()):
        values = value if isinstance(value, (tuple, list)) else (value,)
        if any(v is w for v in values for w in windows):
            item.funcargs[name] = None


@pytest.fixture
def window_for(qtbot, request):
    """Builds the real main window over a store, with this test's own settings file, and closes it after.

        win = window_for(store, annotator="ana")          # shown; show=False leaves it hidden
        win = window_for(store, settings=QSettings(path, QSettings.Format.IniFormat), size=(1366, 768))

    After a passing test it checks that nothing outlives the windows: each is closed and deleted, and the
    test fails, naming what is left, when a window is still alive or a thread the test started still runs.
    """
    import gc
    import threading
    import weakref

    import shiboken6
    from PySide6.QtCore import QCoreApplication, QEvent, QSettings
    from pytestqt.qtbot import QtBot

    from app.session import Session
    from widgets.main_window import MainWindow

    windows = []
    threads_before = set(threading.enumerate())

    def build(store, *, annotator: str | None = None, show: bool = True, settings: QSettings | None = None,
              size: tuple[int, int] | None = None):
        settings = QSettings() if settings is None else settings
        if annotator is not None:
            settings.setValue("annotator", annotator)
        win = MainWindow(store, Session(), settings)
        QtBot.addWidget(qtbot, win)   # pytest-qt closes it; `windows` keeps it until it is checked
        windows.append(win)
        if size is not None:
            win.resize(*size)
        if show:
            win.show()
            qtbot.waitExposed(win)
            win.activateWindow()
        return win

    yield build
    for win in windows:
        if shiboken6.isValid(win):
            win.close()
            win.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    if request.node.stash.get(CALL_FAILED, True):
        return
    refs = [weakref.ref(win) for win in windows]
    _forget_test_values(request.node, windows)
    windows.clear()
    win = None
    gc.collect()
    # a deleted window's wrapper may be touched no more (Qt raises): only whether it is gone is asked
    leaks = []
    for number, ref in enumerate(refs, 1):
        if ref() is not None:
            holders = sorted({_describe(holder) for holder in _outside_holders(ref())})
            leaks.append(f"window {number} of {len(refs)} still alive, held by: {', '.join(holders)}")

    def started_threads() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t not in threads_before and t.is_alive() and not t.daemon]

    try:
        qtbot.waitUntil(lambda: not started_threads(), timeout=5000)
    except qtbot.TimeoutError:
        leaks.append("threads still running: " + ", ".join(t.name for t in started_threads()))
    if leaks:
        pytest.fail("after the test and its windows were closed:\n" + "\n".join(leaks), pytrace=False)


@pytest.fixture
def main_window(window_for, tmp_path, qtbot):
    """The window over a generated FriendBench-like store (12 dyads, 3 models), its table filled."""
    from fixtures_store import friendbench_like_plan, make_store

    store = make_store(tmp_path / "window.duckdb", friendbench_like_plan(tmp_path))
    win = window_for(store)
    qtbot.waitUntil(lambda: win.table_model.rowCount() == 12, timeout=10000)
    yield win
    win.close()
    store.close()


@pytest.fixture
def dyad_store(tmp_path):
    """One FriendBench-style dyad with 6 s of generated audio per participant, and the bundled label sets."""
    import json

    import numpy as np
    import soundfile as sf

    from app.sample import import_label_sets
    from storage.importers.plan import DatasetInfo, ImportPlan
    from storage.importers.writer import write_plan
    from storage.store import Store

    rate = 16000
    t = np.arange(rate * 6) / rate
    for participant, freq in (("A", 220.0), ("B", 330.0)):
        sf.write(tmp_path / f"d1_{participant}.wav", (0.4 * np.sin(2 * np.pi * freq * t)).astype(np.float32), rate)
    plan = ImportPlan(DatasetInfo("Dyads", "friendbench", tmp_path, "test"), "test")
    plan.add("stimuli", [{"external_id": "d1", "kind": "dyad", "ground_truth": "familiar",
                          "meta": json.dumps({"duration_s": 6.0})}])
    plan.add("media", [{"stimulus": "d1", "role": f"audio:{p}", "path": f"d1_{p}.wav", "present": True}
                       for p in "AB"])
    plan.add("segments", [{"stimulus": "d1", "ord": 0, "speaker": "A", "start_s": 0.5, "end_s": 2.0,
                           "text": "would you rather", "words": json.dumps([])}])
    store = Store.open(tmp_path / "s.duckdb")
    import_label_sets(store)
    write_plan(store, plan)
    yield store
    store.close()


@pytest.fixture(scope="session")
def sample_store_file(tmp_path_factory) -> Path:
    """A store with the bundled sample imported once per run; tests open copies of it (`sample_store_copy`)."""
    from app.sample import import_sample
    from storage.store import Store

    path = tmp_path_factory.mktemp("sample") / "sample.duckdb"
    store = Store.open(path)
    import_sample(store)
    store.close()
    return path


@pytest.fixture
def sample_store_copy(sample_store_file, tmp_path):
    """A store of this test's own on a copy of the imported sample, closed after the test."""
    import shutil

    from storage.store import Store

    path = tmp_path / "sample-copy.duckdb"
    shutil.copy(sample_store_file, path)
    store = Store.open(path)
    yield store
    store.close()
