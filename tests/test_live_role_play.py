"""AgentViSS role play from the live panel: the model answers as the chosen character, from the scene told in
words (VV), and the answer is stored as a live run whose context is that character."""
from __future__ import annotations

import json

import pytest

from app.live import LiveSettings
from app.live.service import LiveService
from fixtures_store import make_store
from live_server import Reply, ScriptedServer
from storage import queries
from storage.importers.plan import DatasetInfo, ImportPlan
from widgets.live_panel import LivePanel

ROLES = {"Casimir": {"gender": "male", "age": 31, "occupation": "baker", "expression_style": "deception",
                     "conflict_trait": "competing", "initial_emotion": "defensive"},
         "Yusra": {"gender": "female", "age": 27, "occupation": "bicycle courier", "expression_style": "suppression",
                   "conflict_trait": "accommodating", "initial_emotion": "uneasy", "facial_expression": "frown",
                   "body_action": "stands by the open window"}}
REPLY = "Fine. Keep the cake, Casimir, I was never hungry anyway."


@pytest.fixture
def env(qtbot, tmp_path):
    plan = ImportPlan(DatasetInfo("Scenes", "agentviss", tmp_path, "generated in a test", synthetic=True), "test")
    plan.add("stimuli", [{"external_id": "flat-1", "kind": "agentviss_scene", "title": "flat-1",
                          "text": "A shared flat at night; the last piece of cake is missing.",
                          "meta": json.dumps({"dialogue_type": "eristic", "conflict_intensity": "high",
                                              "characters": ["Casimir", "Yusra"], "roles": ROLES})}])
    plan.add("segments", [{"stimulus": "flat-1", "ord": 0, "speaker": "Casimir", "text": "Who ate my cake?"},
                          {"stimulus": "flat-1", "ord": 1, "speaker": "Yusra", "text": "Not me."}])
    plan.add("predictions", [{"stimulus": "flat-1", "model": "imported", "modality": "", "prompt_setting": "",
                              "vision_mode": "VV", "context": "Yusra", "raw_output": "I did not touch it."}])
    store = make_store(tmp_path / "scenes.duckdb", plan)
    sid = store.cursor().execute("SELECT id FROM stimulus").fetchall()[0][0]
    panel = LivePanel(LiveService(store))
    qtbot.addWidget(panel)
    panel.set_detail(queries.stimulus_detail(store.cursor(), sid))
    yield panel, store, sid
    panel.runner.wait()
    store.close()


def test_the_model_answers_in_role_and_the_answer_is_stored_with_the_role_as_context(qtbot, env):
    panel, store, sid = env
    assert [panel.role.itemText(i) for i in range(panel.role.count())] == ["Casimir", "Yusra"]
    assert panel.form.isRowVisible(panel.role) and not panel.form.isRowVisible(panel.max_steps)
    assert panel.template_name.text().startswith("agentviss.role_play") and panel.steps.isHidden()
    panel.role.setCurrentText("Yusra")
    panel.stream.setChecked(False)
    with ScriptedServer([Reply(text=REPLY, usage=(80, 14))]) as server:
        panel.set_live_settings(LiveSettings(base_url=server.base_url, model="scripted-model",
                                             api_key_env="THINSLICE_NO_KEY"))
        with qtbot.waitSignal(panel.answerFinished, timeout=15000) as caught:
            panel.send_button.click()
    assert caught.args[0].answer == REPLY and panel.answer.toPlainText() == REPLY
    system, user = (m["content"] for m in server.requests[0]["messages"])
    assert system.startswith("You are Yusra") and "suppression" in system and "stands by the open window" in system
    # verbalised vision: the scene and the dialogue as text, no images
    assert isinstance(user, str) and "the last piece of cake is missing" in user
    assert "Casimir: Who ate my cake?\nYusra: Not me." in user
    rows = store.cursor().execute(
        "SELECT r.context, r.vision_mode, r.modality, r.is_live, p.raw_output, p.answer, p.correct, p.tokens_out"
        " FROM prediction p JOIN run r ON r.id = p.run_id WHERE r.is_live").fetchall()
    assert rows == [("Yusra", "VV", "", True, REPLY, REPLY, None, 14)]
    shown = queries.stimulus_detail(store.cursor(), sid).predictions
    assert sorted((p.model, p.condition, p.is_live) for p in shown) == [
        ("imported", "VV / Yusra", False), ("scripted-model", "VV / Yusra", True)]


def test_another_kind_of_stimulus_hides_the_role_choices(env):
    panel, _store, _sid = env
    panel.set_detail(None)
    assert not panel.form.isRowVisible(panel.role) and not panel.form.isRowVisible(panel.role_task)
    assert panel.modality.isEnabled()
