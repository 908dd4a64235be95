//! SVG rendering of a benchmark plot (`afdisk bench --plot FILE.svg`): the core's [`crate::bench::plot::Plot`]
//! (bins on a log time axis, quantiles) drawn as hand-written SVG 1.1 — one step outline per series over a
//! shared log x axis (latency) and a linear y axis (share of the series' samples per bin), tick labels, a
//! dashed median line per series, a title and a legend. Pure: a string out, no I/O.
//!
//! Terms: **share** = a bin's count divided by the series' sample count (series of different sizes compare);
//! every text is XML-escaped.

use std::fmt::Write as _;

use crate::bench::plot::{position, Plot, Series, Side};

const W: f64 = 800.0;
const H: f64 = 480.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 130.0;

/// Escapes text for an XML text node or attribute.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c => o.push(c),
        }
    }
    o
}

fn colour(side: Side) -> &'static str {
    match side {
        Side::Aligned => "#1a7f37",
        Side::Misaligned => "#cf222e",
    }
}

/// The plot as a standalone SVG document.
pub fn svg(p: &Plot) -> String {
    let f = Frame::of(p);
    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">
<title>{}</title>
<rect x="0" y="0" width="{W}" height="{H}" fill="white"/>
<text x="{}" y="24" text-anchor="middle" font-size="15">{}</text>"#,
        escape(&p.title),
        W / 2.0,
        escape(&p.title)
    );
    axes(&mut o, p, &f);
    for s in &p.series {
        series(&mut o, p, &f, s);
    }
    legend(&mut o, p, &f);
    o.push_str("</svg>\n");
    o
}

/// The plot area: its size, and where a latency (x, log scale) and a share of samples (y) fall in it.
struct Frame {
    /// Width and height of the plot area.
    pw: f64,
    ph: f64,
    /// The share at the top of the y axis (the largest bin's share, rounded up to a tenth).
    y_top: f64,
    lo_ns: f64,
    hi_ns: f64,
}

impl Frame {
    fn of(p: &Plot) -> Frame {
        let max_share = p
            .series
            .iter()
            .flat_map(|s| {
                let n = s.samples.max(1) as f64;
                s.counts.iter().map(move |&c| c as f64 / n)
            })
            .fold(0.0f64, f64::max)
            .max(0.01);
        Frame {
            pw: W - LEFT - RIGHT,
            ph: H - TOP - BOTTOM,
            y_top: (max_share * 10.0).ceil() / 10.0,
            lo_ns: p.lo_ns,
            hi_ns: p.hi_ns,
        }
    }

    fn x(&self, ns: f64) -> f64 {
        LEFT + position(ns, self.lo_ns, self.hi_ns) * self.pw
    }

    fn y(&self, share: f64) -> f64 {
        TOP + self.ph - share / self.y_top * self.ph
    }
}

/// The axes, the latency ticks, the share ticks and both axis titles.
fn axes(o: &mut String, p: &Plot, f: &Frame) {
    let ph = f.ph;
    let _ = writeln!(
        o,
        r#"<g stroke="black" stroke-width="1"><line x1="{LEFT}" y1="{y0:.1}" x2="{xr:.1}" y2="{y0:.1}"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{y0:.1}"/></g>"#,
        y0 = TOP + ph,
        xr = LEFT + f.pw
    );
    for (v, label) in &p.ticks {
        let x = f.x(*v);
        let _ = writeln!(
            o,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{y1:.1}" stroke="#ddd"/><text x="{x:.1}" y="{ty:.1}" text-anchor="middle">{}</text>"##,
            escape(label),
            y1 = TOP + ph + 5.0,
            ty = TOP + ph + 20.0
        );
    }
    for k in 0..=4 {
        let share = f.y_top * f64::from(k) / 4.0;
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{:.0}%</text>"#,
            LEFT - 6.0,
            f.y(share) + 4.0,
            share * 100.0
        );
    }
    let _ = writeln!(
        o,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">latency per I/O (log scale)</text>"#,
        LEFT + f.pw / 2.0,
        TOP + ph + 38.0
    );
    let _ = writeln!(
        o,
        r#"<text x="16" y="{:.1}" text-anchor="middle" transform="rotate(-90 16 {:.1})">share of the class's samples per bin</text>"#,
        TOP + ph / 2.0,
        TOP + ph / 2.0
    );
}

/// One series: its step outline, and its median as a dashed line.
fn series(o: &mut String, p: &Plot, f: &Frame, s: &Series) {
    let n = s.samples.max(1) as f64;
    let mut d = format!("M{:.1} {:.1}", f.x(p.lo_ns), f.y(0.0));
    for (i, &c) in s.counts.iter().enumerate() {
        let y = f.y(c as f64 / n);
        let _ = write!(
            d,
            " L{:.1} {y:.1} L{:.1} {y:.1}",
            f.x(p.edges_ns[i]),
            f.x(p.edges_ns[i + 1])
        );
    }
    let _ = write!(d, " L{:.1} {:.1}", f.x(p.hi_ns), f.y(0.0));
    let c = colour(s.side);
    let _ = writeln!(
        o,
        r#"<path d="{d}" fill="{c}" fill-opacity="0.15" stroke="{c}" stroke-width="1.5"/>"#
    );
    if s.samples > 0 {
        let x = f.x(s.median_ns);
        let _ = writeln!(
            o,
            r#"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="{c}" stroke-dasharray="4 3"/>"#,
            TOP + f.ph
        );
    }
}

/// The legend: a swatch and a line per series, and what the dashed line means.
fn legend(o: &mut String, p: &Plot, f: &Frame) {
    for (i, s) in p.series.iter().enumerate() {
        let y = TOP + f.ph + 62.0 + 20.0 * i as f64;
        let c = colour(s.side);
        let _ = writeln!(
            o,
            r#"<rect x="{LEFT}" y="{:.1}" width="14" height="10" fill="{c}"/><text x="{:.1}" y="{y:.1}">{}</text>"#,
            y - 9.0,
            LEFT + 20.0,
            escape(&s.legend())
        );
    }
    let _ = writeln!(
        o,
        r##"<text x="{LEFT}" y="{:.1}" fill="#555">dashed line: median of the class</text>"##,
        H - 8.0
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::plot::distribution;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape(r#"a<b & "c">'"#),
            "a&lt;b &amp; &quot;c&quot;&gt;&apos;"
        );
        let p = distribution("x<y", &[("a&b", Side::Aligned, &[1000, 2000])], 4).unwrap();
        let s = svg(&p);
        assert!(s.contains("x&lt;y") && s.contains("a&amp;b") && !s.contains("a&b"));
    }
}
