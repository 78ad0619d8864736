"""Semantic-gesture annotation (spec/ANNOTATION.md): events, clips, annotator backends, the JSONL
store, review."""
