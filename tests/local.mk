# Shared test helpers.
EXTRA_DIST += tests/integration/lib.sh
