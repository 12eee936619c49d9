"""Measurable behaviour in the voice and in the turn-taking, and how it relates to who judged correctly.

`acoustics` runs Praat's pitch, intensity and formant analyses (praat-parselmouth); `conversation` finds
floors, gaps, overlaps, backchannels and pauses from word times; `measures` turns both into per-voice cue
values; `service` computes and stores them for a dataset; `compare` sets each cue against correctness;
`boundaries` finds the voicing and silence boundaries a label edge snaps to; `workers` runs Praat's
analyses in worker processes, so the window never waits for them.
"""
