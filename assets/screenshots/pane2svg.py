#!/usr/bin/env python3
"""Renders a tmux pane captured with `capture-pane -p -e` (text + SGR escapes) as an SVG terminal picture."""
import html
import re
import sys

PALETTE = {30: "#000000", 31: "#cd3131", 32: "#0dbc79", 33: "#e5e510", 34: "#2472c8", 35: "#bc3fbc",
           36: "#11a8cd", 37: "#e5e5e5", 90: "#666666", 91: "#f14c4c", 92: "#23d18b", 93: "#f5f543",
           94: "#3b8eea", 95: "#d670d6", 96: "#29b8db", 97: "#ffffff"}
FG, BG = "#d4d4d4", "#1e1e1e"
SGR = re.compile(r"\x1b\[([0-9;]*)m")


def cells(line):
    fg, bg, bold, rev = FG, None, False, False
    pos = 0
    for m in SGR.finditer(line):
        for ch in line[pos:m.start()]:
            yield ch, (bg or BG) if rev else fg, (fg if rev else bg), bold
        codes = [int(c) for c in m.group(1).split(";") if c] or [0]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                fg, bg, bold, rev = FG, None, False, False
            elif c == 1:
                bold = True
            elif c == 22:
                bold = False
            elif c == 7:
                rev = True
            elif c == 27:
                rev = False
            elif c in PALETTE:
                fg = PALETTE[c]
            elif c == 39:
                fg = FG
            elif c == 49:
                bg = None
            elif 40 <= c <= 47:
                bg = PALETTE[c - 10]
            elif c in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
                i += 2
            i += 1
        pos = m.end()
    for ch in line[pos:]:
        yield ch, (bg or BG) if rev else fg, (fg if rev else bg), bold


def main():
    lines = sys.stdin.read().rstrip("\n").split("\n")
    cw, ch = 8.4, 17
    width = max(80, max(len(SGR.sub("", l)) for l in lines))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{int(width * cw) + 20}" height="{len(lines) * ch + 20}" '
           f'font-family="DejaVu Sans Mono, Menlo, monospace" font-size="14">',
           f'<rect width="100%" height="100%" fill="{BG}"/>']
    for y, line in enumerate(lines):
        for x, (c, fg, bg, bold) in enumerate(cells(line)):
            px, py = 10 + x * cw, 10 + y * ch
            if bg:
                out.append(f'<rect x="{px:.1f}" y="{py}" width="{cw + 0.3:.1f}" height="{ch}" fill="{bg}"/>')
            if c != " ":
                w = ' font-weight="bold"' if bold else ""
                out.append(f'<text x="{px:.1f}" y="{py + 13}" fill="{fg}"{w}>{html.escape(c)}</text>')
    out.append("</svg>")
    print("\n".join(out))


main()
