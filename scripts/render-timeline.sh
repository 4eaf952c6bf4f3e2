#!/usr/bin/env bash
# Draws field reports with `simulate --timeline` and renders each page in headless Chromium
# (Debian's `chromium`, installed when missing) to a PNG, then checks every PNG: the page
# rendered, is not blank, and its picture is drawn at its size (its lanes reach the bottom and
# the right of a shot sized from the SVG). A page that does not render fails the run.
#
#   scripts/render-timeline.sh OUTDIR SCRIPT...   OUTDIR/NAME.html and OUTDIR/NAME.png each
#   scripts/render-timeline.sh --docs             the pictures the manual and the README show
#                                                 (the demo's run, and each example's), written
#                                                 into the documentation catalog
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  echo "render-timeline: installing Debian's chromium" >&2
  # The package lists an earlier install step fetched serve; only a machine without them
  # fetches them first.
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >&2 ||
    { $sudo apt-get update -qq >&2 &&
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >&2; }
fi
swift build --product entitlement-cache >&2
cli="$(swift build --show-bin-path)/entitlement-cache"
width=1320

# render PAGE PNG: a screenshot as tall as the picture, without the legend below it.
render() {
  local page="$1" png="$2" svg_height height
  svg_height=$(grep -o 'class="timeline" width="[0-9.]*" height="[0-9.]*"' "$page" |
    sed 's/.*height="\([0-9]*\).*/\1/')
  [[ -n "$svg_height" ]] || { echo "render-timeline: $page holds no timeline" >&2; exit 1; }
  height=$((svg_height + 108))
  rm -f "$png"
  timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --force-device-scale-factor=1 --window-size="$width,$height" \
    --screenshot="$png" "file://$(realpath "$page")" >/dev/null 2>&1 || true
  python3 - "$png" "$width" "$height" <<'PY'
import struct, sys, zlib
path, width, height = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
try:
    data = open(path, "rb").read()
except OSError:
    sys.exit(f"render-timeline: {path}: Chromium wrote no picture")
if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
    sys.exit(f"render-timeline: {path}: not a PNG")
w, h = struct.unpack(">II", data[16:24])
if (w, h) != (width, height):
    sys.exit(f"render-timeline: {path}: {w}x{h}, expected {width}x{height}")
# Not blank: the picture's pixels, decompressed, are far from one colour repeated.
chunks, offset = [], 8
while offset < len(data):
    length, kind = struct.unpack(">I4s", data[offset:offset + 8])
    if kind == b"IDAT":
        chunks.append(data[offset + 8:offset + 8 + length])
    offset += 12 + length
pixels = zlib.decompress(b"".join(chunks))
if len(set(pixels[i:i + 3] for i in range(0, len(pixels) - 3, 97))) < 12:
    sys.exit(f"render-timeline: {path}: blank")
# The picture as drawn: undo each row's PNG filter, then find where anything not white is.
depth, color = data[24], data[25]
channels = {2: 3, 6: 4}.get(color)
if depth != 8 or channels is None:
    sys.exit(f"render-timeline: {path}: an 8-bit RGB or RGBA PNG expected")
stride = w * channels
rows, previous, offset = [], bytearray(stride), 0
for _ in range(h):
    kind, line = pixels[offset], bytearray(pixels[offset + 1:offset + 1 + stride])
    offset += 1 + stride
    for i in range(stride):
        left = line[i - channels] if i >= channels else 0
        up, corner = previous[i], previous[i - channels] if i >= channels else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            p = left + up - corner
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
            line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 0xFF
    rows.append(line)
    previous = line
# The lanes' ground (#FAFAFA, which nothing else on the page is) reaches the right of the shot
# and its last rows: the shot is sized from the SVG's own height, so a picture that did not lay
# out at its size (collapsed, shrunk, cut short) leaves them white or shows the legend there.
ground = [(x, y) for y in range(0, h, 2) for x in range(0, w, 2)
          if tuple(rows[y][x * channels:x * channels + 3]) == (250, 250, 250)]
right = max((x for x, _ in ground), default=0)
bottom = max((y for _, y in ground), default=0)
if bottom < h - 40 or right < w * 0.9:
    sys.exit(f"render-timeline: {path}: the lanes reach {right}x{bottom} of {w}x{h}: "
             "the picture is not drawn at its size")
print(f"render-timeline: {path}: {w}x{h}, {len(data):,} bytes, lanes to {right}x{bottom}")
PY
}

# draw SCRIPT PAGE: the script's timeline, in the directory of the script (its `db`, if any).
draw() {
  local script="$1" page="$2"
  (cd "$(dirname "$script")" && "$cli" simulate --script "$(basename "$script")" \
    --timeline "$page" >/dev/null)
}

if [[ "${1:-}" == "--docs" ]]; then
  out=Sources/EntitlementCacheCLI/EntitlementCacheCLI.docc/Resources
  mkdir -p "$out"
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  TMPDIR="$scratch" "$cli" demo >/dev/null
  render "$scratch/entitlement-cache-demo-timeline.html" "$out/timeline-demo.png"
  for script in Examples/FieldReports/*.json; do
    name=$(basename "$script" .json)
    draw "$script" "$scratch/$name.html"
    render "$scratch/$name.html" "$out/timeline-$name.png"
  done
  exit 0
fi

[[ $# -ge 2 ]] || { sed -n '2,9p' "$0" >&2; exit 2; }
out="$1"
shift
mkdir -p "$out"
out=$(realpath "$out")
for script in "$@"; do
  name=$(basename "$script" .json)
  draw "$script" "$out/$name.html"
  render "$out/$name.html" "$out/$name.png"
done
