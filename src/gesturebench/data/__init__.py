"""Data: the records (Motion, SequenceRecord, Word, SemInterval), the BEAT2 reader, audio, TextGrid
and sem I/O, the length policy and the gesture-class vocabulary."""
