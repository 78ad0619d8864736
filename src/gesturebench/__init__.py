"""gesturebench: perceptually grounded, semantics-aware evaluation of holistic co-speech gesture
generation."""

__version__ = "0.1.0"
