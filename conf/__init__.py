"""The configs, shipped as package data `gesturebench.conf` (setup.py): Hydra reads an installed
package's configs from a package with this file (`pkg://gesturebench.conf`)."""
