"""What a race shows on stage: each contender's lane (its text so far, its time, its answer) and which verdicts
the presenter has revealed, fed with the race's events (`app.live.race.run_race`) on one thread.

Verdicts are revealed in the order the contenders finished, and the truth last, once every lane has ended; a
presenter may choose to see each verdict as it comes instead. Kept apart from the race itself, and light, so
the stage can be drawn before the live client and the benchmarks' rules are loaded. Qt-free.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.contenders import Contender

# what a lane is doing
WAITING, ASKING, ANSWERED, KEPT, FAILED, CANCELLED = "waiting", "asking", "answered", "kept", "failed", "cancelled"
ENDED = (ANSWERED, KEPT, FAILED, CANCELLED)


@dataclass(frozen=True)
class RaceEvent:
    """Something that happened in one lane: the request went out ("asking"), a piece of streamed text
    ("text"), an answer ("answered", or "kept" from an earlier race), a failure ("failed", with a short
    `message` and the whole one in `full_message`), or a cancel ("cancelled")."""

    lane: int
    kind: str
    text: str = ""
    answer: str | None = None
    correct: bool | None = None
    latency_s: float | None = None
    message: str = ""
    full_message: str = ""
    prediction_id: int | None = None


@dataclass
class Lane:
    """One contender's column: what it is doing, its text so far, and its answer once it has one."""

    contender: Contender
    status: str = WAITING
    pieces: list[str] = field(default_factory=list)
    chars: int = 0
    answer: str | None = None
    correct: bool | None = None
    latency_s: float | None = None
    message: str = ""
    full_message: str = ""
    prediction_id: int | None = None
    ended_at: float | None = None
    revealed: bool = False

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    @property
    def has_verdict(self) -> bool:
        """An answer the benchmark's rule read (answered now or kept from before)."""
        return self.status in (ANSWERED, KEPT)

    def text(self) -> str:
        return "".join(self.pieces)

    def tail(self, limit: int) -> str:
        """The last `limit` characters of the text so far (a column shows where the answer has got to),
        gathered from the end without joining the whole answer."""
        taken, size = [], 0
        for piece in reversed(self.pieces):
            taken.append(piece[-(limit - size):])
            size += len(taken[-1])
            if size >= limit:
                break
        return "".join(reversed(taken))


class RaceState:
    """The race as the stage shows it. Apply events in the order they came, on one thread."""

    def __init__(self, contenders: Sequence[Contender], truth: str | None, verdicts_at_once: bool = False,
                 now: float | None = None) -> None:
        self.lanes = [Lane(c) for c in contenders]
        self.truth = truth or None
        self.verdicts_at_once = verdicts_at_once
        self.started_at = time.monotonic() if now is None else now
        self.finish_order: list[int] = []   # lanes with a verdict, in the order they finished
        self.truth_revealed = False

    def apply(self, event: RaceEvent, now: float | None = None) -> None:
        """Fold one event into its lane. A lane that has ended takes no more text; an answer that was stored
        just as the race was cancelled still shows, since the store has it."""
        lane = self.lanes[event.lane]
        now = time.monotonic() if now is None else now
        if event.kind == "text":
            if not lane.ended:
                lane.status = ASKING
                lane.pieces.append(event.text)
                lane.chars += len(event.text)
            return
        if event.kind == ASKING:
            if not lane.ended:
                lane.status = ASKING
            return
        if lane.ended and not (lane.status == CANCELLED and event.kind == ANSWERED):
            return
        lane.status, lane.ended_at = event.kind, now
        if event.kind in (ANSWERED, KEPT, FAILED) and event.text:
            lane.pieces, lane.chars = [event.text], len(event.text)
        lane.answer, lane.correct, lane.latency_s = event.answer, event.correct, event.latency_s
        lane.message, lane.full_message, lane.prediction_id = event.message, event.full_message, event.prediction_id
        if lane.has_verdict and event.lane not in self.finish_order:
            self.finish_order.append(event.lane)

    def elapsed(self, index: int, now: float | None = None) -> float:
        """Seconds lane `index` has taken: the answer's own latency once it has one, else the time since the
        race began (until the lane ended)."""
        lane = self.lanes[index]
        if lane.latency_s is not None and lane.has_verdict:
            return lane.latency_s
        end = lane.ended_at if lane.ended_at is not None else (time.monotonic() if now is None else now)
        return max(0.0, end - self.started_at)

    def over(self) -> bool:
        """True once every lane has ended."""
        return all(lane.ended for lane in self.lanes)

    def cancel_all(self, now: float | None = None) -> list[int]:
        """Mark every running lane cancelled (the race's cancel stops their requests); returns them."""
        now = time.monotonic() if now is None else now
        running = [i for i, lane in enumerate(self.lanes) if not lane.ended]
        for i in running:
            self.lanes[i].status, self.lanes[i].ended_at = CANCELLED, now
        return running

    # ----- revealing -------------------------------------------------------------------------------------
    def verdict_shown(self, index: int) -> bool:
        return self.lanes[index].has_verdict and (self.verdicts_at_once or self.lanes[index].revealed)

    def truth_shown(self) -> bool:
        return self.truth_revealed or (self.verdicts_at_once and self.over())

    def reveal_next(self) -> int | None:
        """Reveal the verdict of the next contender to have finished, in finishing order, or the truth once
        every lane has ended and every verdict is shown. Returns the lane revealed, -1 for the truth, or None
        when nothing can be revealed now."""
        for index in self.finish_order:
            if not self.verdict_shown(index):
                self.lanes[index].revealed = True
                return index
        if self.over() and self.truth is not None and not self.truth_shown():
            self.truth_revealed = True
            return -1
        return None

    def reveal_all(self) -> None:
        """Reveal every verdict there is, and the truth once every lane has ended."""
        while self.reveal_next() is not None:
            pass

    def all_revealed(self) -> bool:
        """True once the race is over and the room has seen every verdict and the truth."""
        return self.over() and all(self.verdict_shown(i) for i in self.finish_order) and (
            self.truth is None or self.truth_shown())
