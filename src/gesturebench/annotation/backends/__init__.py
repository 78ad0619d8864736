"""Annotator backends (conf/annotator/): kinematic (offline), gemini, openai (OpenAI-compatible),
replay."""
