//! Figures: a small data model (what to plot) and its rendering with `plotters` to SVG and PNG.
//!
//! The HTML report and `--png` draw the same [`Figure`] through one generic function, so the inline SVG
//! and the PNG of a figure cannot disagree, and the table printed under each figure is made from the very
//! points that were drawn. Text is set in DejaVu Sans, embedded in the binary (the `dejavu` crate, through
//! plotters' `ab_glyph` renderer): a PNG rendered on a fresh machine without any system fonts still has its
//! labels, and the SVG's text measurements match the PNG's.
//!
//! The legend sits in its own pane to the right of the plot so it never hides a curve.

use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

/// Figure size in pixels (SVG user units and PNG pixels alike).
pub const WIDTH: u32 = 1100;
pub const HEIGHT: u32 = 560;
/// Width of the legend pane on the right.
const LEGEND_WIDTH: u32 = 360;
const FONT: &str = "sans-serif";
/// Largest-to-smallest ratio beyond which an axis goes logarithmic: past about a decade and a half a linear
/// axis squeezes the small values onto zero, where they can no longer be read or compared.
const LOG_SPAN: f64 = 30.0;

/// Tableau 10: distinguishable, colour-blind-aware, readable on white.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4E, 0x79, 0xA7),
    RGBColor(0xF2, 0x8E, 0x2B),
    RGBColor(0xE1, 0x57, 0x59),
    RGBColor(0x76, 0xB7, 0xB2),
    RGBColor(0x59, 0xA1, 0x4F),
    RGBColor(0xED, 0xC9, 0x48),
    RGBColor(0xB0, 0x7A, 0xA1),
    RGBColor(0xFF, 0x9D, 0xA7),
    RGBColor(0x9C, 0x75, 0x5F),
    RGBColor(0xBA, 0xB0, 0xAC),
];

/// How the x axis is scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XScale {
    /// Message sizes: log₂ axis, ticks at powers of two labelled 16, 1K, 64K.
    Log2,
    /// Counts (sessions, cores): linear, integer ticks.
    Integer,
}

/// What kind of chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Lines with markers, one per series.
    Lines(XScale),
    /// Grouped bars at integer x (per-thread values by session).
    Bars,
    /// Empirical distribution functions: each series is its values sorted ascending, paired with the
    /// fraction of values ≤ each (so y rises to 1), drawn as a staircase without markers. x is the measured
    /// value, on a log₁₀ axis when the values span more than [`LOG_SPAN`].
    Cdf,
}

/// One named series of (x, y) points, in data units (x in bytes or a count, not log₂).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Colour index: series of the same function share a colour across files and configurations.
    pub color: usize,
    /// Line style and marker index: tells files/configurations of one function apart.
    pub variant: usize,
}

impl Series {
    /// A series with its own colour `index` and the solid style.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>, index: usize) -> Series {
        Series {
            name: name.into(),
            points,
            color: index,
            variant: 0,
        }
    }
}

/// A number stated with a figure rather than drawn (a quantile, a fairness index, a count), listed in the
/// table behind the figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Statistic {
    /// The series it describes, or what it is of ("all sessions").
    pub of: String,
    pub name: String,
    pub value: f64,
    /// A count of things: shown without decimals.
    pub count: bool,
}

/// A horizontal reference line (e.g. the aggregate value over per-thread bars).
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub name: String,
    pub y: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Stable identifier: the PNG file stem and the HTML anchor.
    pub id: String,
    pub title: String,
    /// A second, smaller title line (what exactly is shown).
    pub subtitle: String,
    pub x_label: String,
    pub y_label: String,
    pub kind: Kind,
    pub series: Vec<Series>,
    pub references: Vec<Reference>,
    /// Sentences printed with the figure: what it summarises, or leaves out.
    pub notes: Vec<String>,
    pub statistics: Vec<Statistic>,
}

impl Figure {
    fn finite_points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    }

    /// Whether there is anything to draw.
    pub fn is_empty(&self) -> bool {
        self.finite_points().next().is_none()
    }
}

/// A rendering failure, as text (plotters' error types are generic over the backend).
#[derive(Debug, thiserror::Error)]
#[error("figure {figure}: {reason}")]
pub struct PlotError {
    pub figure: String,
    pub reason: String,
}

fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Only fails on a corrupt font file, which the dejavu crate does not ship.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Colour of series `i`.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// "16", "1K", "64K", "1M" for power-of-two byte counts; plain numbers otherwise.
pub fn size_text(bytes: f64) -> String {
    let b = bytes.round() as u64;
    if b >= 1 << 20 && b % (1 << 20) == 0 {
        format!("{}M", b >> 20)
    } else if b >= 1024 && b % 1024 == 0 {
        format!("{}K", b >> 10)
    } else {
        b.to_string()
    }
}

/// Axis tick text for y values; `top` (the axis maximum) sets one precision for every tick.
fn y_text(v: f64, top: f64) -> String {
    if top >= 1e5 {
        return format!("{:.0}k", v / 1e3);
    }
    let step = top / 10.0;
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil().clamp(0.0, 4.0) as usize
    };
    format!("{v:.decimals$}")
}

fn shorten(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(max - 1).collect();
        s.push('…');
        s
    }
}

fn err(fig: &Figure, e: impl std::fmt::Display) -> PlotError {
    PlotError {
        figure: fig.id.clone(),
        reason: e.to_string(),
    }
}

/// Render a figure as an SVG document (a string starting with `<svg`).
pub fn render_svg(fig: &Figure) -> Result<String, PlotError> {
    register_fonts();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        draw(fig, &root)?;
        root.present().map_err(|e| err(fig, e))?;
    }
    Ok(out)
}

/// Render a figure as a PNG file of [`WIDTH`] × [`HEIGHT`] pixels.
///
/// The bitmap backend only writes to a named file, so it renders to a temporary sibling whose bytes are
/// then written by the one output rule ([`super::write_atomic`]): a link or device at `path` is written
/// through, a regular file replaced whole.
pub fn render_png(fig: &Figure, path: &Path) -> Result<(), PlotError> {
    register_fonts();
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // The backend picks the format from the extension, so the temporary name ends in .png.
    let tmp = dir.join(format!(".{}.{}.tmp.png", fig.id, std::process::id()));
    let rendered = (|| {
        let root = BitMapBackend::new(&tmp, (WIDTH, HEIGHT)).into_drawing_area();
        draw(fig, &root)?;
        root.present()
            .map_err(|e| err(fig, format!("{}: {e}", path.display())))?;
        drop(root);
        std::fs::read(&tmp).map_err(|e| err(fig, format!("{}: {e}", path.display())))
    })();
    let _ = std::fs::remove_file(&tmp);
    super::write_atomic(path, &rendered?).map_err(|e| err(fig, e))
}

fn draw<DB: DrawingBackend>(fig: &Figure, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
    root.fill(&WHITE).map_err(|e| err(fig, e))?;
    let titled = root
        .titled(&fig.title, (FONT, 21).into_font().style(FontStyle::Bold))
        .map_err(|e| err(fig, e))?;
    let titled = if fig.subtitle.is_empty() {
        titled
    } else {
        let style = (FONT, 15)
            .into_font()
            .color(&RGBColor(0x55, 0x55, 0x55))
            .pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Top,
            ));
        titled
            .draw(&Text::new(
                shorten(&fig.subtitle, 120),
                (WIDTH as i32 / 2, 2),
                style,
            ))
            .map_err(|e| err(fig, e))?;
        titled.margin(24, 0, 0, 0)
    };
    let (plot_area, legend_area) = titled.split_horizontally(WIDTH - LEGEND_WIDTH);
    if fig.is_empty() {
        plot_area
            .draw(&Text::new(
                "no data to plot",
                (40, 40),
                (FONT, 18).into_font().color(&BLACK),
            ))
            .map_err(|e| err(fig, e))?;
        return Ok(());
    }

    let points: Vec<(f64, f64)> = fig.finite_points().collect();
    let ref_max = fig
        .references
        .iter()
        .map(|r| r.y)
        .filter(|y| y.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    let y_max = points
        .iter()
        .map(|p| p.1)
        .fold(ref_max, f64::max)
        .max(f64::MIN_POSITIVE);
    let y_min = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    // Cycles/byte against size spans two or three decades (tens at 16 B, below one at 64 KiB): a linear
    // axis would flatten every large-message value onto zero, so such line plots get a log₁₀ y axis.
    let log_y =
        matches!(fig.kind, Kind::Lines(XScale::Log2)) && y_min > 0.0 && y_max / y_min > LOG_SPAN;
    let to_y = |y: f64| if log_y { y.log10() } else { y };
    let y_top = y_max * 1.1;
    let y_range = if log_y {
        (y_min.log10() - 0.1)..(y_max.log10() + 0.1)
    } else {
        0.0..y_top
    };
    let (x_lo, x_hi) = points
        .iter()
        .map(|p| p.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    // Per-thread cycles/byte of thousands of sessions can run from a few (busy threads) to thousands
    // (starved ones): the same reason as log y above.
    let log_x = fig.kind == Kind::Cdf && x_lo > 0.0 && x_hi / x_lo > LOG_SPAN;
    // x in plot coordinates: log₂ of bytes for size axes, log₁₀ of a wide-ranging value.
    let to_x = |x: f64| match fig.kind {
        Kind::Lines(XScale::Log2) => x.max(1.0).log2(),
        Kind::Cdf if log_x => x.log10(),
        _ => x,
    };
    let (lo, hi) = (to_x(x_lo), to_x(x_hi));
    let x_range = match fig.kind {
        Kind::Lines(XScale::Log2) => (lo - 0.3)..(hi + 0.3),
        Kind::Lines(XScale::Integer) => (lo - 0.3).min(hi - 1.0)..(hi + 0.3).max(lo + 1.0),
        Kind::Bars => (lo - 0.6)..(hi + 0.6),
        Kind::Cdf => {
            // One value (every session alike) still needs an axis of some width around it.
            let pad = if hi > lo {
                (hi - lo) * 0.05
            } else {
                (hi.abs() * 0.05).max(0.5)
            };
            (lo - pad)..(hi + pad)
        }
    };
    let x_ticks = match fig.kind {
        Kind::Cdf => 10,
        _ => ((x_range.end - x_range.start).ceil() as usize + 1).clamp(2, 20),
    };
    let x_top = x_range.end;

    let mut chart = ChartBuilder::on(&plot_area)
        .margin(12)
        .x_label_area_size(56)
        .y_label_area_size(78)
        .build_cartesian_2d(x_range, y_range)
        .map_err(|e| err(fig, e))?;
    let x_format = |v: &f64| -> String {
        if fig.kind == Kind::Cdf {
            return if log_x {
                let value = 10f64.powf(*v);
                y_text(value, value * 10.0)
            } else {
                y_text(*v, x_top)
            };
        }
        if (v - v.round()).abs() > 1e-6 {
            return String::new();
        }
        match fig.kind {
            Kind::Lines(XScale::Log2) => size_text(2f64.powf(v.round())),
            _ => format!("{}", v.round() as i64),
        }
    };
    let y_format = |v: &f64| {
        if log_y {
            let value = 10f64.powf(*v);
            y_text(value, value * 10.0)
        } else {
            y_text(*v, y_top)
        }
    };
    chart
        .configure_mesh()
        .x_desc(if log_x {
            format!("{} (log scale)", fig.x_label)
        } else {
            fig.x_label.clone()
        })
        .y_desc(if log_y {
            format!("{} (log scale)", fig.y_label)
        } else {
            fig.y_label.clone()
        })
        .x_labels(x_ticks)
        .y_labels(10)
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .max_light_lines(1)
        .light_line_style(RGBColor(0xF2, 0xF2, 0xF2))
        .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
        .draw()
        .map_err(|e| err(fig, e))?;

    match fig.kind {
        Kind::Lines(_) => {
            for s in &fig.series {
                let c = color(s.color);
                let pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .filter(|(x, y)| x.is_finite() && y.is_finite())
                    .map(|&(x, y)| (to_x(x), to_y(y)))
                    .collect();
                match dash(s.variant) {
                    None => {
                        chart
                            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                            .map_err(|e| err(fig, e))?;
                    }
                    Some((on, off)) => {
                        chart
                            .draw_series(DashedLineSeries::new(
                                pts.clone(),
                                on,
                                off,
                                c.stroke_width(2),
                            ))
                            .map_err(|e| err(fig, e))?;
                    }
                }
                chart
                    .draw_series(pts.iter().map(|&p| marker(s.variant, p, c)))
                    .map_err(|e| err(fig, e))?;
            }
        }
        Kind::Bars => {
            let groups = fig.series.len().max(1) as f64;
            let width = 0.8 / groups;
            for (i, s) in fig.series.iter().enumerate() {
                let c = color(s.color);
                let left = -0.4 + width * i as f64;
                chart
                    .draw_series(
                        s.points
                            .iter()
                            .filter(|(x, y)| x.is_finite() && y.is_finite())
                            .map(|&(x, y)| {
                                Rectangle::new([(x + left, 0.0), (x + left + width, y)], c.filled())
                            }),
                    )
                    .map_err(|e| err(fig, e))?;
            }
        }
        Kind::Cdf => {
            for s in &fig.series {
                let c = color(s.color);
                // The staircase: flat between values, a step of 1/n at each; it starts from 0 at the
                // smallest value, since no session lies below it.
                let mut stairs: Vec<(f64, f64)> = Vec::with_capacity(2 * s.points.len());
                let mut below = 0.0;
                for &(x, y) in s
                    .points
                    .iter()
                    .filter(|(x, y)| x.is_finite() && y.is_finite())
                {
                    stairs.push((to_x(x), below));
                    stairs.push((to_x(x), y));
                    below = y;
                }
                match dash(s.variant) {
                    None => chart
                        .draw_series(LineSeries::new(stairs, c.stroke_width(2)))
                        .map(|_| ()),
                    Some((on, off)) => chart
                        .draw_series(DashedLineSeries::new(stairs, on, off, c.stroke_width(2)))
                        .map(|_| ()),
                }
                .map_err(|e| err(fig, e))?;
            }
        }
    }
    let x_span = chart.x_range();
    for (k, r) in fig.references.iter().enumerate() {
        let c = color(fig.series.len() + k);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x_span.start, to_y(r.y)), (x_span.end, to_y(r.y))],
                8,
                5,
                c.stroke_width(2),
            ))
            .map_err(|e| err(fig, e))?;
    }

    draw_legend(fig, &legend_area).map_err(|e| err(fig, e))?;
    Ok(())
}

/// Dash pattern (on, off) of a variant; `None` is solid.
fn dash(variant: usize) -> Option<(u32, u32)> {
    match variant % 4 {
        0 => None,
        1 => Some((10, 6)),
        2 => Some((3, 4)),
        _ => Some((16, 4)),
    }
}

/// Marker of a variant: disc, triangle, cross, ring.
fn marker<DB: DrawingBackend, C: Clone + 'static>(
    variant: usize,
    at: C,
    c: RGBColor,
) -> DynElement<'static, DB, C> {
    match variant % 4 {
        0 => Circle::new(at, 4, c.filled()).into_dyn(),
        1 => TriangleMarker::new(at, 5, c.filled()).into_dyn(),
        2 => Cross::new(at, 4, c.stroke_width(2)).into_dyn(),
        _ => Circle::new(at, 4, c.stroke_width(2)).into_dyn(),
    }
}

fn draw_legend<DB: DrawingBackend>(
    fig: &Figure,
    area: &DrawingArea<DB, Shift>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let style = (FONT, 13).into_font().color(&BLACK);
    let line_height = 21;
    let (x0, mut y) = (10, 22);
    let rows = fig.series.len() + fig.references.len();
    // Too many to list: say how many more rather than overflow the pane.
    let max_rows = ((HEIGHT as i32 - 80) / line_height) as usize;
    let sample_line = |y: i32, c: RGBColor, pattern: Option<(u32, u32)>| {
        let segments: Vec<(i32, i32)> = match pattern {
            None => vec![(0, 30)],
            Some((on, off)) => {
                let (on, off) = (on as i32, off as i32);
                (0..)
                    .map(|k| k * (on + off))
                    .take_while(|&s| s < 30)
                    .map(|s| (s, (s + on).min(30)))
                    .collect()
            }
        };
        segments
            .into_iter()
            .map(move |(a, b)| PathElement::new(vec![(x0 + a, y), (x0 + b, y)], c.stroke_width(2)))
    };
    for (i, s) in fig.series.iter().enumerate() {
        if i + 1 == max_rows && rows > max_rows {
            area.draw(&Text::new(
                format!("… and {} more (see the table)", rows - i),
                (x0, y - 7),
                style.clone(),
            ))?;
            return Ok(());
        }
        let c = color(s.color);
        match fig.kind {
            Kind::Lines(_) => {
                for seg in sample_line(y, c, dash(s.variant)) {
                    area.draw(&seg)?;
                }
                area.draw(&marker(s.variant, (x0 + 15, y), c))?;
            }
            Kind::Cdf => {
                for seg in sample_line(y, c, dash(s.variant)) {
                    area.draw(&seg)?;
                }
            }
            Kind::Bars => {
                area.draw(&Rectangle::new(
                    [(x0 + 4, y - 7), (x0 + 26, y + 7)],
                    c.filled(),
                ))?;
            }
        }
        area.draw(&Text::new(
            shorten(&s.name, 44),
            (x0 + 38, y - 8),
            style.clone(),
        ))?;
        y += line_height;
    }
    for (k, r) in fig.references.iter().enumerate() {
        let c = color(fig.series.len() + k);
        for seg in sample_line(y, c, Some((8, 5))) {
            area.draw(&seg)?;
        }
        area.draw(&Text::new(
            shorten(&r.name, 44),
            (x0 + 38, y - 8),
            style.clone(),
        ))?;
        y += line_height;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Figure {
        Figure {
            id: "t".into(),
            title: "t".into(),
            x_label: "message size (bytes)".into(),
            y_label: "cycles/byte".into(),
            kind: Kind::Lines(XScale::Log2),
            subtitle: String::new(),
            series: vec![Series::new(
                "a",
                vec![(16.0, 30.0), (64.0, 10.0), (4096.0, 2.0)],
                0,
            )],
            references: vec![],
            notes: vec![],
            statistics: vec![],
        }
    }

    #[test]
    fn svg_has_labels() {
        let svg = render_svg(&sample()).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("cycles/byte"));
        assert!(svg.contains("4K"), "power-of-two tick label");
    }

    #[test]
    fn size_labels() {
        assert_eq!(size_text(16.0), "16");
        assert_eq!(size_text(65536.0), "64K");
        assert_eq!(size_text(1500.0), "1500");
        assert_eq!(size_text(1048576.0), "1M");
    }
}
