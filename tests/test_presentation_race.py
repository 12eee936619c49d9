"""A race in the real presentation window, driven with its keys: R asks four local servers at once (one quick,
one slow, one refusing the key, one cutting its stream), each column shows its own end, Down reveals the
verdicts in the order they came and the truth last, Escape cancels a running race, and R on a stimulus raced
before shows the kept answers while Shift+R asks again."""
from __future__ import annotations

import threading

import pytest
from PySide6.QtWidgets import QPushButton

from app.contenders import Contender
from fixtures_store import friendbench_like_plan, make_store
from live_server import Reply, ScriptedServer
from store_rows import changed_rows, store_rows
from test_window_keys import become_active, click_row, press

FAMILIAR = "They finish each other's sentences and tease each other, so I would say they are familiar."
STRANGER = "They are polite and careful, ask each other's names and keep a distance: strangers."
LIVE = ("SELECT m.name, p.stimulus_id, p.answer, p.correct FROM prediction p JOIN run r ON r.id = p.run_id"
        " JOIN model m ON m.id = r.model_id WHERE r.is_live ORDER BY m.name, p.stimulus_id")


@pytest.fixture
def race_window(window_for, tmp_path, qtbot):
    store = make_store(tmp_path / "race.duckdb", friendbench_like_plan(tmp_path, n_stimuli=4))
    win = window_for(store)
    # the rows of the latest read, so a click is not made on rows about to be replaced
    qtbot.waitUntil(lambda: win.table_model.rowCount() == 4 and win.table_model.settled(), timeout=10000)
    yield win, store
    if win.compare.presentation is not None:
        win.compare.presentation.leave()
    win.close()
    store.close()


def present(qtbot, win, row: int):
    click_row(qtbot, win, row)
    qtbot.waitUntil(lambda: win.compare.detail is not None
                    and win.compare.detail.external_id == f"clip-{row:03d}", timeout=10000)
    press(qtbot, "F5")
    show = win.compare.presentation
    qtbot.waitUntil(show.isFullScreen, timeout=5000)
    become_active(qtbot, show)
    return show


def lineup(*servers: ScriptedServer) -> tuple[Contender, ...]:
    names = ("Quick", "Slow", "Refused", "Cut")
    return tuple(Contender(name, s.base_url, f"{name.lower()}-1", "text", "RACE_TEST_KEY")
                 for name, s in zip(names, servers))


def test_a_race_on_stage_reveals_each_verdict_as_it_comes_and_the_truth_last(qtbot, race_window, monkeypatch):
    win, store = race_window
    monkeypatch.setenv("RACE_TEST_KEY", "sk-race-gui-0123456789")
    slow_may_answer = threading.Event()
    with ScriptedServer([Reply(text=FAMILIAR, chunk_size=6)] * 2, lifetime_s=60) as quick, \
            ScriptedServer(lambda _b: Reply(text=STRANGER, chunk_size=6) if slow_may_answer.wait(30)
                           else Reply(kind="http_error", status=500), lifetime_s=60) as slow, \
            ScriptedServer([Reply(kind="http_error", status=401, text="Incorrect API key provided")] * 3,
                           lifetime_s=60) as refusing, \
            ScriptedServer([Reply(text=FAMILIAR, chunk_size=6, cut_after=4)] * 3, lifetime_s=60) as cutting:
        win.settings_store.update(contenders=lineup(quick, slow, refusing, cutting))
        show = present(qtbot, win, 0)
        assert show.race_button.isVisible() and "R: Race the contenders" in show.help.text()
        before = store_rows(store)
        press(qtbot, "R")
        race = show.race_view
        assert race is not None and show.race_running() and not show.scroll.isVisible()
        qtbot.waitUntil(lambda: all(race.state.lanes[i].ended for i in (0, 2, 3)), timeout=20000)
        race.refresh()
        columns = [race.column_text(i) for i in range(4)]
        assert [c["name"] for c in columns] == ["Quick", "Slow", "Refused", "Cut"]
        assert columns[0]["answer"] == "familiar ?" and columns[0]["status"].startswith("answered in ")
        assert columns[0]["body"] == FAMILIAR
        assert "asking" in columns[1]["status"] and columns[1]["answer"] == ""      # still going
        assert columns[2]["status"].startswith("✗ key refused (HTTP 401)")
        assert columns[3]["status"].startswith("✗ cut off before the end") and columns[3]["body"] == FAMILIAR[:24]
        assert race.truth.isVisible() and "truth: ?" == race.truth.text()
        press(qtbot, "Down")
        assert race.column_text(0)["answer"] == "familiar ✓ right"
        press(qtbot, "Down")     # the slow one has not answered: nothing more, and not the truth
        press(qtbot, "Right")    # nor does the presenter's one key leave a race that is still running
        assert "?" in race.truth.text() and show.race_view is race
        slow_may_answer.set()
        qtbot.waitUntil(lambda: not show.race_running(), timeout=20000)
        assert race.column_text(1)["answer"] == "stranger ?"
        press(qtbot, "Down")
        assert race.column_text(1)["answer"] == "stranger ✗ wrong"
        press(qtbot, "Down")
        assert race.truth.text() == "truth: <b>familiar</b>"
        assert show.race_view is race    # the answers it stored refreshed the stimulus, not the stage
        # kept like any live run: scored answers for the two that answered, the cut one as a failed attempt
        sid = win.compare.detail.id
        assert store.cursor().execute(LIVE).fetchall() == [("quick-1", sid, "familiar", True),
                                                           ("slow-1", sid, "stranger", False)]
        assert store.cursor().execute("SELECT model, status FROM live_failure").fetchall() == [("cut-1", "cut_off")]
        assert set(changed_rows(before, store_rows(store))) == {"model", "run", "prediction", "live_failure"}
        # Compare hears of them through the change channel, as of any live answer
        qtbot.waitUntil(lambda: {"quick-1", "slow-1"} <= {p.model for p in win.compare.detail.predictions
                                                           if p.is_live}, timeout=10000)
        # R again on the same stimulus shows the kept answers; only those without one are asked again
        press(qtbot, "R")
        race = show.race_view
        qtbot.waitUntil(lambda: not show.race_running(), timeout=20000)
        assert race.column_text(0)["status"].startswith("kept from an earlier race")
        assert race.column_text(0)["answer"] == "familiar ?" and race.column_text(0)["body"] == FAMILIAR
        assert race.column_text(1)["answer"] == "stranger ?"
        assert [len(s.requests) for s in (quick, slow, refusing, cutting)] == [1, 1, 2, 2]
        # Shift+R asks again: every contender is asked afresh
        press(qtbot, "Shift+R")
        qtbot.waitUntil(lambda: not show.race_running(), timeout=20000)
        assert [len(s.requests) for s in (quick, slow, refusing, cutting)] == [2, 2, 3, 3]
        assert show.race_view.column_text(0)["status"].startswith("answered in ")
        press(qtbot, "A")
        assert show.race_view.state.all_revealed()
        # once all is shown, the presenter's key moves on; the next stimulus shows its stored answers again
        press(qtbot, "Right")
        qtbot.waitUntil(lambda: win.compare.detail.external_id == "clip-001", timeout=10000)
        assert show.race_view is None and show.scroll.isVisible()


def test_escape_cancels_every_contender_then_leaves(qtbot, race_window):
    win, store = race_window
    endless = Reply(text=FAMILIAR * 200, chunk_size=4, chunk_delay_s=0.05)
    with ScriptedServer([endless], lifetime_s=60) as one, ScriptedServer([endless], lifetime_s=60) as two:
        win.settings_store.update(contenders=lineup(one, two))
        show = present(qtbot, win, 1)
        before = store_rows(store)
        button = next(b for b in show.findChildren(QPushButton) if b.text() == "Race (R)")
        button.click()
        race = show.race_view
        qtbot.waitUntil(lambda: all(lane.chars > 0 for lane in race.state.lanes), timeout=20000)
        press(qtbot, "Escape")
        assert not show.race_running() and win.compare.presentation is show
        assert all(race.column_text(i)["status"].startswith("cancelled at ") for i in range(2))
        shown = race.column_text(0)["body"]
        assert shown and shown in FAMILIAR * 200     # what had streamed in stays on stage
        qtbot.wait(300)   # what the servers still send after the cancel changes nothing
        assert race.column_text(0)["body"] == shown
        press(qtbot, "Escape")
        qtbot.waitUntil(lambda: win.compare.presentation is None, timeout=5000)
    assert store_rows(store) == before


def test_a_race_without_contenders_says_how_to_name_them(qtbot, race_window):
    win, _store = race_window
    show = present(qtbot, win, 0)
    press(qtbot, "R")
    assert show.race_view is None and "Cannot race: no contenders yet" in show.help.text()


def test_contenders_are_named_on_stage_and_kept_by_the_name_of_their_key(qtbot, race_window, monkeypatch):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QDialogButtonBox

    from widgets.contenders_dialog import ContendersDialog

    win, _store = race_window
    monkeypatch.setenv("RACE_DIALOG_KEY", "sk-never-stored-0123456789")
    show = present(qtbot, win, 0)
    seen: dict[str, str] = {}

    def fill() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, ContendersDialog)
        ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
        for name in ("Local Qwen", "Local Qwen"):
            dialog.findChildren(QPushButton)[0].click()          # Add
            row = dialog.table.rowCount() - 1
            for column, value in ((0, name), (1, "http://127.0.0.1:8000/v1"), (2, f"qwen-{row}"),
                                  (4, "RACE_DIALOG_KEY")):
                dialog.table.item(row, column).setText(value)
        dialog.table.cellWidget(1, 3).setCurrentText("audio")
        ok.click()                                               # two contenders of one name: refused
        seen["refusal"] = dialog.message.text()
        seen["keys"] = dialog.keys.text()
        assert dialog.isVisible()
        dialog.table.item(1, 0).setText("Qwen audio")
        ok.click()

    QTimer.singleShot(0, fill)
    show.contenders_button.click()
    assert seen["refusal"] == "two contenders are named Local Qwen"
    assert "Local Qwen: key from environment variable RACE_DIALOG_KEY" in seen["keys"] and "sk-never" not in seen["keys"]
    assert win.settings_store.load().contenders == (
        Contender("Local Qwen", "http://127.0.0.1:8000/v1", "qwen-0", "text", "RACE_DIALOG_KEY"),
        Contender("Qwen audio", "http://127.0.0.1:8000/v1", "qwen-1", "audio", "RACE_DIALOG_KEY"))
    assert "sk-never" not in open(win.settings.fileName(), encoding="utf-8").read()
    show.at_once.click()
    assert win.settings_store.load().race_verdicts_at_once and show.at_once.text() == "Verdicts: at once"


def test_the_clip_plays_on_while_a_race_stores_its_answers(qtbot, dyad_store, window_for, monkeypatch):
    win = window_for(dyad_store)
    qtbot.waitUntil(lambda: win.table_model.rowCount() == 1, timeout=10000)
    click_row(qtbot, win, 0)
    player = win.media_page.player
    qtbot.waitUntil(lambda: win.compare.detail is not None and not win.media_page.busy(), timeout=30000)
    with ScriptedServer([Reply(text=FAMILIAR, chunk_size=6, chunk_delay_s=0.01)], lifetime_s=60) as quick:
        win.settings_store.update(contenders=(Contender("Quick", quick.base_url, "quick-1", "text", ""),))
        press(qtbot, "F5")
        show = win.compare.presentation
        qtbot.waitUntil(show.isFullScreen, timeout=5000)
        become_active(qtbot, show)
        press(qtbot, "Space")
        qtbot.waitUntil(lambda: player.clock.position > 0.3, timeout=10000)
        press(qtbot, "R")
        at_race = player.clock.position
        qtbot.waitUntil(lambda: not show.race_running(), timeout=20000)
        # the window reads the stimulus again for the stored answer; the clip is not reloaded under the room
        # (which would stop it at its start): it plays on, or has played to its end
        qtbot.waitUntil(lambda: any(p.model == "quick-1" for p in win.compare.detail.predictions), timeout=10000)
        assert player.clock.position > at_race
        assert player.clock.playing or player.clock.position >= player.clock.duration - 0.05
        assert show.race_view.column_text(0)["answer"] == "familiar ?"
        press(qtbot, "Escape")
    qtbot.waitUntil(lambda: win.compare.presentation is None, timeout=5000)
