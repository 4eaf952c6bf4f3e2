#!/usr/bin/env bash
# Draws field reports with `simulate --timeline` and renders each page in headless Chromium
# (Debian's `chromium`, installed when missing) to a PNG, then checks every PNG: the page
# rendered, is not blank, and its picture is drawn at its size (its lanes reach the bottom and
# the right of a shot sized from the SVG). A page that does not render fails the run.
#
#   scripts/render-timeline.sh OUTDIR SCRIPT...   OUTDIR/NAME.html and OUTDIR/NAME.png each
#   scripts/render-timeline.sh --docs             the pictures the manual and the README show
#                                                 (the demo's run, each example's, and one
#                                                 lane of each kind alone: timeline-lane-KIND),
#                                                 written into the documentation catalog
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

# render PAGE PNG [ABOVE]: a screenshot as tall as the picture, without the legend below it.
# ABOVE is how much of the page is above the picture: 108 pixels for a page as `simulate`
# writes it (the margin, the title and the summary), 20 for a lane's page (the margin alone).
render() {
  local page="$1" png="$2" above="${3:-108}" svg_height height
  svg_height=$(grep -o 'class="timeline" width="[0-9.]*" height="[0-9.]*"' "$page" |
    sed 's/.*height="\([0-9]*\).*/\1/')
  [[ -n "$svg_height" ]] || { echo "render-timeline: $page holds no timeline" >&2; exit 1; }
  height=$((svg_height + above))
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
# The picture as drawn: undo each row's PNG filter, then find the lanes' ground.
depth, color, interlace = data[24], data[25], data[28]
channels = {2: 3, 6: 4}.get(color)
if depth != 8 or channels is None or interlace != 0:
    sys.exit(f"render-timeline: {path}: an 8-bit RGB or RGBA PNG, not interlaced, expected")
stride = w * channels
rows, previous, offset = [], bytearray(stride), 0
for _ in range(h):
    kind, line = pixels[offset], bytearray(pixels[offset + 1:offset + 1 + stride])
    offset += 1 + stride
    if kind > 4:
        sys.exit(f"render-timeline: {path}: a row with filter {kind}, which PNG does not have")
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

# lane PAGE KIND LANEPAGE: a page of the first lane of KIND in PAGE's picture, alone: PAGE's
# head and style, its SVG's definitions and axis, and the lane moved up under the axis, the SVG
# as tall as that one lane (the axis' ticks and quiet stretches shortened with it). No title,
# summary or legend: the manual's text around the picture says what the lane shows.
lane() {
  python3 - "$1" "$2" "$3" <<'PY'
import re, sys
page, kind, out = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(page, encoding="utf-8").read()
def fail(problem):
    sys.exit(f"render-timeline: {page}: {problem}")
def number(value):
    return str(int(value)) if value == int(value) else f"{value:.1f}"
body = text.find("<body>\n")
opening = re.search(r'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="([0-9.]+)" '
                    r'height="([0-9.]+)" viewBox="0 0 [0-9.]+ [0-9.]+"', text)
if body < 0 or opening is None:
    fail("holds no timeline")
end = text.find("</svg>\n", opening.start())
# Every lane starts a line of the SVG, after the definitions and the axis; hover text, which
# may hold line breaks, is escaped, so no line of it starts with a tag.
first = re.search(r'(?m)^<g class="lane ', text[opening.start():end])
if end < 0 or first is None:
    fail("holds no lane")
top_part = text[opening.start():opening.start() + first.start()]
lanes = re.split(r'(?m)^(?=<g class="lane )', text[opening.start() + first.start():end])
lanes = [lane for lane in lanes if lane]
ground = re.compile(r'<rect class="lane-ground" x="[0-9.]+" y="([0-9.]+)" width="[0-9.]+" '
                    r'height="([0-9.]+)"/>')
def place(lane):
    found = ground.search(lane)
    if found is None:
        fail("a lane without its ground")
    return float(found.group(1)), float(found.group(2))
chosen = [lane for lane in lanes if lane.startswith(f'<g class="lane lane-{kind}" ')]
if not chosen:
    fail(f"no lane of kind {kind}")
lane = chosen[0]
axis_bottom = place(lanes[0])[0]
last_y, last_height = place(lanes[-1])
below = float(opening.group(2)) - (last_y + last_height)
y, lane_height = place(lane)
height = axis_bottom + lane_height + below
# The axis' lines and shades ran to the old picture's bottom, less 10 (TimelineSVG's axis).
bottom = height - 10
top_part, ticks = re.subn(r'(<line class="tick" [^>]*?y2=")[0-9.]+"',
                          lambda m: f'{m.group(1)}{number(bottom)}"', top_part)
top_part, shades = re.subn(r'(<rect class="break-shade" [^>]*?height=")[0-9.]+"',
                           lambda m: f'{m.group(1)}{number(bottom - 28)}"', top_part)
if ticks == 0:
    fail("an axis without ticks")
width = opening.group(1)
top_part = top_part.replace(
    opening.group(0),
    f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{width}" '
    f'height="{number(height)}" viewBox="0 0 {width} {number(height)}"', 1)
title = re.match(r'<g class="lane [^"]*" data-lane="([^"]*)"', lane).group(1)
top_part = top_part.replace('aria-label="timeline of the run"',
                            f'aria-label="the {title} lane of a timeline"', 1)
if y > axis_bottom:
    lane = lane.replace(f'<g class="lane lane-{kind}" ',
                        f'<g class="lane lane-{kind}" transform="translate(0,-{number(y - axis_bottom)})" ', 1)
with open(out, "w", encoding="utf-8") as file:
    file.write(text[:body + len("<body>\n")] + top_part + lane.rstrip("\n") + "\n</svg>\n"
               + "</body>\n</html>\n")
PY
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
  # One lane of each kind, for the manual's list of lanes: the demo's, but for the device
  # clock and the device lock, which the demo does not draw.
  for kind in access freshness user phase clock lock network purchases diagnostics; do
    case "$kind" in
      clock) page="$scratch/clock-set-back.html" ;;
      lock) page="$scratch/locked-at-launch.html" ;;
      *) page="$scratch/entitlement-cache-demo-timeline.html" ;;
    esac
    lane "$page" "$kind" "$scratch/lane-$kind.html"
    render "$scratch/lane-$kind.html" "$out/timeline-lane-$kind.png" 20
  done
  exit 0
fi

[[ $# -ge 2 ]] || { sed -n '2,11p' "$0" >&2; exit 2; }
out="$1"
shift
mkdir -p "$out"
out=$(realpath "$out")
for script in "$@"; do
  name=$(basename "$script" .json)
  draw "$script" "$out/$name.html"
  render "$out/$name.html" "$out/$name.png"
done
