"""The public files gesturebench's presets and models need (`table`), fetched, verified, bundled for
offline machines and checked before a run (`fetch`)."""
