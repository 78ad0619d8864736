"""A fake "official" gesture model: a script writing result files in every supported format, and
importable objects."""
