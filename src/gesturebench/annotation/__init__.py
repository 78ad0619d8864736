"""Semantic-gesture annotation (docs/annotation.md): events, clips, annotator backends, the JSONL
store, review."""
