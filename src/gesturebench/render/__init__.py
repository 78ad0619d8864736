"""Motion → frames and video (skeleton or shaded mesh), for W&B run clips, annotation clips and
study stimuli."""
