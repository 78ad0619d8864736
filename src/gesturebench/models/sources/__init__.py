"""Model sources: a gesture model (EMAGE, GestureLSM, SemTalk, SemConFlow or your own) whose motion
arrives as one result file per sequence, read by `models.formats.read_result`.

- `outputs.OutputsSource`: result files the model's own code already wrote.
- `command.CommandSource`: a shell command run in the model's own environment.
- `module.ModuleSource`: an importable Python object with its weights.

All share `base.ResultSource`, which tracks the fields a model copies from the reference. A model
YAML that offers them all picks one with its `model/source` config group (conf/model/source/: each
option builds its class; ``native``, the model's own class of `native.NativeSource`, takes its
options from conf/model/native/<model>.yaml).
"""
