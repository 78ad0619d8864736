"""Semantic-gesture annotation (docs/annotation.md): events, clips, annotator backends, the JSONL
store and its runner, what a task hands down (`setup`) and the annotation it runs (`annotate`),
review."""
