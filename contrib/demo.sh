#!/bin/sh
# The quick-start demo.
set -eu
pinhole=${1:-pinhole}
"$pinhole" --version
