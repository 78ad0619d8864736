"""Pure tensor/array maths of the metrics, free of state, tested against independent
implementations."""
