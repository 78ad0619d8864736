"""Model sources: a gesture model (EMAGE, GestureLSM, SemTalk, SemConFlow or your own) whose motion
arrives as one result file per sequence, read by `models.formats.read_result`.

- `outputs.OutputsSource`: result files the model's own code already wrote.
- `command.CommandSource`: a shell command run in the model's own environment.
- `module.ModuleSource`: an importable Python object with its weights.

All share `base.ResultSource`, which tracks the fields a model copies from the reference;
`choice` picks the class from ``model.source`` in a model YAML that offers all three.
"""
