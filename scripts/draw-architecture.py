#!/usr/bin/env python3
"""Renders docs/architecture.txt (boxes on a grid, arrows between them) as
docs/architecture.svg. Standard library only; run it after editing the text:
    python3 scripts/draw-architecture.py docs/architecture.txt docs/architecture.svg
"""
import shlex
import sys
from xml.sax.saxutils import escape

CELL_W, CELL_H, BOX_W, BOX_H, MARGIN = 260, 120, 220, 62, 20


def parse(path):
    boxes, arrows = {}, []
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        words = shlex.split(line)
        if words[0] == "box":
            _, ident, col, row, title, detail = words
            boxes[ident] = (int(col), int(row), title, detail)
        elif words[0] == "arrow":
            _, src, dst, label = words
            arrows.append((src, dst, label))
        else:
            raise SystemExit(f"{path}: unknown line: {line}")
    for src, dst, _ in arrows:
        for end in (src, dst):
            if end not in boxes:
                raise SystemExit(f"{path}: arrow names an unknown box {end!r}")
    return boxes, arrows


def anchor(box, towards):
    """Point on the box's border facing the other box's centre."""
    (col, row), (tcol, trow) = box[:2], towards[:2]
    x, y = MARGIN + col * CELL_W, MARGIN + row * CELL_H
    cx, cy = x + BOX_W / 2, y + BOX_H / 2
    if trow > row:
        return cx, y + BOX_H
    if trow < row:
        return cx, y
    return (x + BOX_W, cy) if tcol > col else (x, cy)


def render(boxes, arrows):
    cols = max(b[0] for b in boxes.values()) + 1
    rows = max(b[1] for b in boxes.values()) + 1
    width, height = 2 * MARGIN + cols * CELL_W - (CELL_W - BOX_W), 2 * MARGIN + rows * CELL_H - (CELL_H - BOX_H)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           'font-family="sans-serif" font-size="13">',
           '<defs><marker id="arrow" markerWidth="10" markerHeight="8" refX="9" refY="4" orient="auto">'
           '<path d="M0,0 L10,4 L0,8 z" fill="#555"/></marker></defs>',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    for src, dst, label in arrows:
        x1, y1 = anchor(boxes[src], boxes[dst])
        x2, y2 = anchor(boxes[dst], boxes[src])
        out.append(f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" stroke="#555" stroke-width="1.5" '
                   'marker-end="url(#arrow)"/>')
        out.append(f'<text x="{(x1 + x2) / 2 + 4:.0f}" y="{(y1 + y2) / 2 - 4:.0f}" fill="#333" font-size="11">{escape(label)}</text>')
    for col, row, title, detail in boxes.values():
        x, y = MARGIN + col * CELL_W, MARGIN + row * CELL_H
        out.append(f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="8" fill="#eef3fb" stroke="#3a6ea5"/>')
        out.append(f'<text x="{x + BOX_W / 2:.0f}" y="{y + 26}" text-anchor="middle" font-weight="bold">{escape(title)}</text>')
        out.append(f'<text x="{x + BOX_W / 2:.0f}" y="{y + 46}" text-anchor="middle" fill="#444">{escape(detail)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: draw-architecture.py SOURCE.txt OUT.svg")
    boxes, arrows = parse(sys.argv[1])
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(render(boxes, arrows))


if __name__ == "__main__":
    main()
