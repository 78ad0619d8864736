"""Data: BEAT2 reader, mini-BEAT2 generator, datamodule and the records they produce."""
