"""The test package: Triton's CPU interpreter switched on before anything imports Triton."""

import os

import torch

if not torch.cuda.is_available():
    # Triton kernels run in Triton's CPU interpreter here. Triton reads this when its kernels are
    # first defined, so it is set here, before conftest imports any of the package's modules.
    os.environ.setdefault("TRITON_INTERPRET", "1")
