"""Motion → frames and video (skeleton), for W&B logging, annotation clips and studies."""
