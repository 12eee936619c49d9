"""Nothing on screen outlives what it was about: a live label's note leaves with its stimulus, the audio note
shows only on a page that plays, an old 401 leaves the live panel and the status bar once a batch starts,
and a story's summary follows the question clicked."""
from __future__ import annotations



from app.live import LiveSettings
from app.live.service import LiveService
from fixtures_store import friendbench_like_plan, make_store
from live_server import Reply, ScriptedServer
from storage import queries
from test_beliefs_story_page import _click_row, _page, story_store  # noqa: F401 (a fixture)
from test_window_keys import become_active, live_labels, press
from widgets.live_panel import LivePanel


def show(qtbot, win, stimulus_id: int) -> None:
    """Show a stimulus as picking its dataset and then its row does."""
    (dataset,) = win.store.cursor().execute("SELECT d.name FROM stimulus s JOIN dataset d ON d.id = s.dataset_id"
                                            " WHERE s.id = ?", [stimulus_id]).fetchone()
    win.select_dataset(dataset)
    # the dataset's table comes in and shows its first row; then its row is picked
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None
                    and win.stimulus_view.detail.dataset_name == dataset, timeout=30000)
    win.select_stimulus_id(stimulus_id)
    qtbot.waitUntil(lambda: win.stimulus_view.detail is not None and win.stimulus_view.detail.id == stimulus_id
                    and not win.media_page.busy(), timeout=30000)


def first_of(store, kind: str) -> list[int]:
    return [r[0] for r in store.cursor().execute("SELECT id FROM stimulus WHERE kind = ? ORDER BY id", [kind]).fetchall()]


def test_a_live_labels_note_and_the_audio_note_leave_with_what_they_were_about(qtbot, sample_store_copy,
                                                                              window_for):
    win = window_for(sample_store_copy, annotator="ana")
    qtbot.waitUntil(lambda: win.table_model.rowCount() > 0, timeout=10000)
    dyads, scenes = first_of(sample_store_copy, "dyad"), first_of(sample_store_copy, "agentviss_scene")
    show(qtbot, win, dyads[0])
    become_active(qtbot, win)
    win.table.setFocus()
    qtbot.waitUntil(lambda: win.table.hasFocus(), timeout=5000)
    clock = win.media_page.player.clock
    before = len(live_labels(sample_store_copy))
    press(qtbot, "Space")
    qtbot.waitUntil(lambda: clock.position > 0.6, timeout=10000)
    press(qtbot, "3")   # overlap: start
    started = clock.position
    qtbot.waitUntil(lambda: clock.position > started + 0.4, timeout=10000)
    press(qtbot, "3")   # and end
    press(qtbot, "K")
    assert len(live_labels(sample_store_copy)) == before + 1
    note = win.media_page.annotation.status
    assert note.text().startswith("overlap: ")
    audio = win.media_page.player.audio_status
    assert win.audio_label.text() == (f"audio: {audio}" if audio else "")
    show(qtbot, win, dyads[1])
    assert note.text() == ""          # the last clip's label is not this one's
    show(qtbot, win, scenes[0])
    assert win.stimulus_view.current_page() is win.scene_view
    assert win.audio_label.text() == ""   # a scene page plays nothing: no word about audio output
    show(qtbot, win, dyads[0])
    assert win.audio_label.text() == (f"audio: {audio}" if audio else "")


def test_an_old_401_goes_when_a_batch_starts_and_when_another_stimulus_is_shown(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("THINSLICE_TEST_KEY", "sk-test-0123456789")
    store = make_store(tmp_path / "fb.duckdb", friendbench_like_plan(tmp_path, n_stimuli=3, models=("alpha",)))
    cur = store.cursor()
    ids = [r[0] for r in cur.execute("SELECT id FROM stimulus ORDER BY id").fetchall()]
    panel = LivePanel(LiveService(store))
    qtbot.addWidget(panel)
    said: list[str] = []
    panel.statusMessage.connect(said.append)
    panel.modality.setCurrentText("text")
    panel.stream.setChecked(False)
    panel.set_detail(queries.stimulus_detail(cur, ids[0]))
    replies = [Reply(kind="http_error", status=401, text="bad key")] + [Reply(text="familiar")] * 3
    with ScriptedServer(replies) as server:
        panel.set_live_settings(LiveSettings(base_url=server.base_url, model="m", api_key_env="THINSLICE_TEST_KEY"))
        with qtbot.waitSignal(panel.answerFinished, timeout=15000):
            panel.send_button.click()
        assert "401" in panel.message.text() and "401" in said[-1]
        panel.set_batch_ids(ids)
        with qtbot.waitSignal(panel.batchFinished, timeout=20000):
            panel.batch_button.click()
            assert "401" not in panel.message.text() and said[-1] == ""   # gone as the batch starts
    assert "Batch finished" in panel.message.text()
    with ScriptedServer([Reply(kind="http_error", status=401, text="bad key")]) as server:
        panel.set_live_settings(LiveSettings(base_url=server.base_url, model="m", api_key_env="THINSLICE_TEST_KEY"))
        panel.set_detail(queries.stimulus_detail(cur, ids[1]))
        with qtbot.waitSignal(panel.answerFinished, timeout=15000):
            panel.send_button.click()
    assert "401" in panel.message.text()
    panel.set_detail(queries.stimulus_detail(cur, ids[2]))
    assert panel.message.text() == "" and said[-1] == ""   # about the last stimulus's question
    panel.runner.wait()
    store.close()


def test_the_storys_summary_follows_the_question_clicked(qtbot, story_store):  # noqa: F811
    cur = story_store.cursor()
    opened = cur.execute("SELECT id FROM stimulus WHERE title = 'In which container will Tobias search for the key?'"
                         ).fetchone()[0]
    page = _page(qtbot)
    page.set_detail(queries.stimulus_detail(cur, opened))
    table = page.questions.table
    assert "Tobias search for the key" in page.summary.text()
    for row in range(table.row_count()):
        _click_row(qtbot, page, row)
        question = page.questions.rows[row]
        assert question.question in page.summary.text().replace("&#x27;", "'")
        assert f"expected <b>{question.expected}</b>" in page.summary.text()
    assert table.row_count() > 1
