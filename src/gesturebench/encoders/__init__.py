"""Learned feature extractors: the motion autoencoder behind FGD / Density / Coverage (and the
text–motion model for SC)."""
