"""The predictions dock: full condition names, free-text answers, every judge criterion with its reason inline."""
from __future__ import annotations

import json

from app.conditions import condition_name
from fixtures_store import make_store
from storage import queries
from storage.importers.plan import DatasetInfo, ImportPlan
from storage.records import Prediction
from widgets.predictions_panel import PredictionsPanel


def prediction(**fields) -> Prediction:
    base = dict(id=1, model="m", modality=None, prompt_setting=None, vision_mode=None, context=None, answer=None,
                raw_output=None, correct=None, latency_s=None, is_live=False)
    return Prediction(**{**base, **fields})


def test_conditions_read_as_the_benchmarks_name_them():
    assert condition_name(prediction(modality="conversation:target", prompt_setting="enhance")) == \
        "target voice, enhanced prompt"
    assert condition_name(prediction(modality="conversation:neutral", prompt_setting="no")) == \
        "neutral voice, no prompt"
    assert condition_name(prediction(vision_mode="VV", context="Yusra")) == "as Yusra, verbalized vision (VV)"


def scene_plan(root) -> ImportPlan:
    plan = ImportPlan(DatasetInfo("Scenes", "agentviss", root, "generated in a test", synthetic=True), "test")
    plan.add("stimuli", [{"external_id": "sc1", "kind": "agentviss_scene", "title": "scene",
                          "meta": json.dumps({"roles": {"Yusra": {}}})}])
    reply = "I would rather not say where I was last night, but I can tell you it was nothing to worry about."
    plan.add("predictions", [{"stimulus": "sc1", "model": "atlas", "modality": "", "vision_mode": "VV",
                              "context": "Yusra", "raw_output": reply}])
    plan.add("judgments", [{"stimulus": "sc1", "model": "atlas", "modality": "", "vision_mode": "VV",
                            "context": "Yusra", "judge": "j", "criterion": c, "score": s, "scale_max": 10.0,
                            "rationale": f"{c} because of the reply"} for c, s in (("Expr", 8.0), ("Char", 3.0))])
    return plan


def test_free_text_answers_and_each_reason_under_its_criterion(qtbot, tmp_path):
    store = make_store(tmp_path / "s.duckdb", scene_plan(tmp_path))
    detail = queries.stimulus_detail(store.cursor(), 1)
    store.close()
    panel = PredictionsPanel()
    qtbot.addWidget(panel)
    panel.resize(380, 700)
    panel.show()
    panel.set_detail(detail)
    item = panel.tree.topLevelItem(0).child(0)
    assert item.text(0) == "as Yusra, verbalized vision (VV)"
    assert item.text(1).startswith("I would rather not say") and item.text(1) != "—"
    reasons = [label.text() for label in panel.reasons]
    assert sorted(reasons) == ["Char because of the reply", "Expr because of the reply"]
    qtbot.waitUntil(lambda: all(label.isVisible() for label in panel.reasons), timeout=3000)


def test_a_narrow_dock_keeps_the_model_and_condition_readable(qtbot, tmp_path):
    store = make_store(tmp_path / "s.duckdb", scene_plan(tmp_path))
    detail = queries.stimulus_detail(store.cursor(), 1)
    store.close()
    panel = PredictionsPanel()
    qtbot.addWidget(panel)
    panel.resize(240, 600)
    panel.show()
    panel.set_detail(detail)
    qtbot.waitUntil(lambda: panel.tree.isColumnHidden(3) and panel.tree.isColumnHidden(1), timeout=3000)
    assert panel.tree.columnWidth(0) >= 150
    panel.resize(700, 600)
    qtbot.waitUntil(lambda: not panel.tree.isColumnHidden(3) and not panel.tree.isColumnHidden(1), timeout=3000)
