"""Mini-BEAT2: a synthetic dataset in BEAT2's exact on-disk layout, generated on first use in
seconds (`dataset.generate_mini_beat2`).

Why: every part of gesturebench (metrics, encoders, annotation, studies, the tests) needs data whose
structure is known — which words are stressed, where the semantic gestures are and of which class —
and that runs offline on a laptop. Real BEAT2 is large and licensed; this generator writes the same
files, so the same reader serves both.

Layout (as in ``beat_english_v2.0.0``): ``smplxflame_30/{id}.npz`` (BEAT2's keys and dtypes),
``wave16k/{id}.wav`` (16 kHz mono float), ``textgrid/{id}.TextGrid`` (tier ``words``),
``sem/{id}.txt`` (BEAT's six tab-separated columns), ``train_test_split.csv`` (``id,type``). Ids
read ``{speaker}_{name}_0_{k}_{k}``. Sizes:

* ``default``: 4 speakers × 6 sequences = 16 train, 4 val, 4 test (one per speaker, 30–36 s; others
  30–60 s).
* ``standard``: a BEAT2-sized test split (265 sequences of 10–75 s, lognormal like BEAT2's, ≈ 2 h
  over 25 speakers) plus 25 train and 5 val sequences of 30–60 s.

A sequence is generated in four steps, one module each: the speaker's style (`speakers`), the
timeline of words, semantic intervals and beat strokes (`plan`), the audio (`speech`) and the motion
(`motion`, built on the shared `gesturebench.synthesis`); `dataset` writes them to disk.
"""
