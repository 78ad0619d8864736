"""The study web app (`task=study_server`): stimuli from a render manifest, participants' blocks,
storage, pages, export."""
