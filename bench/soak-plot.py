"""The soak's memory as an SVG line chart: `python3 bench/soak-plot.py SAMPLES FAULTS OUT.svg`.

SAMPLES has a line per sample, "minutes api w1 w2 apns-sim api-anonymous w2-anonymous" (MB: RSS, then the anonymous
part of the api's and w2's); FAULTS a line per fault, "minutes label". Draws memory against minutes, a line per process
(the anonymous parts dotted, in their process's colour), and a dashed vertical marker with its label for each fault.
"""
import math, sys
from html import escape

samples_path, faults_path, out_path = sys.argv[1:4]
# Each column's name, colour and dash pattern ("" for a solid line).
lines = [("api", "#1f77b4", ""), ("w1", "#d62728", ""), ("w2", "#2ca02c", ""), ("apns-sim", "#9467bd", ""),
         ("api anon", "#1f77b4", "2 2"), ("w2 anon", "#2ca02c", "2 2")]
samples = [[float(x) for x in line.split()] for line in open(samples_path) if line.strip()]
faults = [(float(line.split()[0]), line.split(None, 1)[1].strip()) for line in open(faults_path) if line.strip()]

width, height = 960, 480
left, right, top, bottom = 60, 110, 30, 50
plot_w, plot_h = width - left - right, height - top - bottom
x_max = max([s[0] for s in samples] + [m for m, _ in faults] + [1])
y_max = max([v for s in samples for v in s[1:]] + [1])


def nice_step(span, ticks):
    raw = span / ticks
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)


x_step, y_step = nice_step(x_max, 12), nice_step(y_max, 8)
y_max = math.ceil(y_max / y_step) * y_step
x = lambda minutes: left + plot_w * minutes / x_max
y = lambda mb: top + plot_h * (1 - mb / y_max)

svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
       'font-family="sans-serif" font-size="12">',
       f'<rect width="{width}" height="{height}" fill="white"/>',
       f'<text x="{left}" y="18" font-size="14">Memory of each process during the soak</text>']
# Grid and axes.
tick = 0.0
while tick <= y_max + 1e-9:
    svg.append(f'<line x1="{left}" y1="{y(tick):.1f}" x2="{left + plot_w}" y2="{y(tick):.1f}" stroke="#e5e5e5"/>')
    svg.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:g}</text>')
    tick += y_step
tick = 0.0
while tick <= x_max + 1e-9:
    svg.append(f'<line x1="{x(tick):.1f}" y1="{top + plot_h}" x2="{x(tick):.1f}" y2="{top + plot_h + 4}" stroke="black"/>')
    svg.append(f'<text x="{x(tick):.1f}" y="{top + plot_h + 18}" text-anchor="middle">{tick:g}</text>')
    tick += x_step
svg.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="black"/>')
svg.append(f'<text x="{left + plot_w / 2}" y="{height - 10}" text-anchor="middle">minutes</text>')
svg.append(f'<text transform="translate(16 {top + plot_h / 2}) rotate(-90)" text-anchor="middle">MB</text>')
# Faults: a dashed line each, labels staggered so that close ones stay readable.
for i, (minutes, label) in enumerate(faults):
    svg.append(f'<line x1="{x(minutes):.1f}" y1="{top}" x2="{x(minutes):.1f}" y2="{top + plot_h}" stroke="#888" '
               'stroke-dasharray="4 3"/>')
    svg.append(f'<text x="{x(minutes) + 3:.1f}" y="{top + 12 + 12 * (i % 4)}" fill="#555" font-size="10">'
               f'{escape(label)}</text>')
# A line per process, and its name at the right-hand end.
for column, (name, colour, dashes) in enumerate(lines, start=1):
    dash = f' stroke-dasharray="{dashes}"' if dashes else ""
    points = " ".join(f"{x(s[0]):.1f},{y(s[column]):.1f}" for s in samples if len(s) > column)
    svg.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.5"{dash}/>')
    svg.append(f'<line x1="{left + plot_w + 10}" y1="{top + 20 * column}" x2="{left + plot_w + 30}" '
               f'y2="{top + 20 * column}" stroke="{colour}" stroke-width="2"{dash}/>')
    svg.append(f'<text x="{left + plot_w + 35}" y="{top + 20 * column + 4}">{name}</text>')
svg.append("</svg>")
with open(out_path, "w") as f:
    f.write("\n".join(svg) + "\n")
