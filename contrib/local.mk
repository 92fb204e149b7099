# Presets and other files shipped alongside the program.
dist_preset_DATA = \
	contrib/presets/debian \
	contrib/presets/github \
	contrib/presets/go \
	contrib/presets/node \
	contrib/presets/python \
	contrib/presets/rust
EXTRA_DIST += contrib/demo.sh
# Examples beside the documents.
docexamplesdir = $(docdir)/examples
dist_docexamples_DATA = contrib/example.policy \
	contrib/approval-bridge/bridge.py
