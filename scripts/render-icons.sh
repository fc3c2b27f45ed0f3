#!/usr/bin/env bash
# Renders resources/icons/nopescope.svg to the PNG sizes under resources/icons/hicolor/. Run it
# after editing the SVG and commit the PNGs: the build uses them and does not need this tool.
# Needs rsvg-convert (Debian package librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")/../resources/icons"
command -v rsvg-convert >/dev/null || { echo "render-icons: needs rsvg-convert (apt-get install librsvg2-bin)" >&2; exit 1; }
for size in 16 24 32 48 64 128 256; do
    mkdir -p "hicolor/${size}x${size}/apps"
    rsvg-convert -w "$size" -h "$size" nopescope.svg -o "hicolor/${size}x${size}/apps/nopescope.png"
    echo "render-icons: hicolor/${size}x${size}/apps/nopescope.png"
done
