"""Controls that do not apply to the stimulus on screen are not shown."""
from __future__ import annotations

from dataclasses import replace


def test_the_echomind_prompt_is_offered_only_on_echomind(qtbot, main_window):
    qtbot.waitUntil(lambda: main_window.stimulus_view.detail is not None, timeout=10000)
    live = main_window.live
    dyad = main_window.stimulus_view.detail
    live.set_detail(dyad)
    assert not live.prompt_setting.isVisibleTo(live) and not live.prompt_label.isVisibleTo(live)
    live.set_detail(replace(dyad, kind="echomind_script"))
    assert live.prompt_setting.isVisibleTo(live) and live.prompt_label.isVisibleTo(live)
