//! Figures: a small data model (what to plot) and its rendering with `plotters` to SVG and PNG.
//!
//! The HTML report and `--png` draw the same [`Figure`] through one generic function, so the inline SVG
//! and the PNG of a figure cannot disagree, and the table printed under each figure is made from the very
//! points that were drawn. Text is set in DejaVu Sans, embedded in the binary (the `dejavu` crate, through
//! plotters' `ab_glyph` renderer): a PNG rendered on a fresh machine without any system fonts still has its
//! labels, and the SVG's text measurements match the PNG's.
//!
//! The legend sits in its own pane to the right of the plot so it never hides a curve.
//!
//! A point can carry what is known about it besides its value ([`Annotation`]): how uncertain it is,
//! drawn as an error bar (the result's 95 % confidence interval, or the min–max of its repeats when it
//! has none), and the validity warnings its result carries, drawn as a hollow red ring around the marker —
//! so a number that should not be trusted cannot look like one that can. The legend says what the bars
//! and rings mean. A size axis has a tick at every measured size and no others: ticks at powers of two
//! between measured sizes would suggest measurements that were not made, and 40, 576 or 1500 would have
//! none.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;
use std::path::Path;
use std::sync::Once;

/// Figure size in pixels (SVG user units and PNG pixels alike).
pub const WIDTH: u32 = 1100;
pub const HEIGHT: u32 = 560;
/// Width of the legend pane on the right.
const LEGEND_WIDTH: u32 = 360;
/// Characters of legend text that fit beside a sample in that pane.
const LEGEND_CHARS: usize = 44;
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
    /// Named steps (the ISA ladder): x is the index into these labels, one tick and label each, all
    /// shown whether or not a series has a point there.
    Categories(&'static [&'static str]),
}

impl XScale {
    /// The label of category `x`, for a categorical axis and a whole `x` inside it.
    pub fn category(self, x: f64) -> Option<&'static str> {
        match self {
            XScale::Categories(labels) if x >= 0.0 && (x - x.round()).abs() < 1e-6 => {
                labels.get(x.round() as usize).copied()
            }
            _ => None,
        }
    }
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
    /// Empty, or one per point in the order of `points`: its uncertainty and warnings (line figures).
    pub annotations: Vec<Annotation>,
}

impl Series {
    /// A series with its own colour `index` and the solid style.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>, index: usize) -> Series {
        Series {
            name: name.into(),
            points,
            color: index,
            variant: 0,
            annotations: Vec::new(),
        }
    }

    /// What is known about point `i` besides its value, if anything.
    pub fn annotation(&self, i: usize) -> Option<&Annotation> {
        self.annotations.get(i)
    }
}

/// What a bar around a point stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BarKind {
    /// The result's 95 % confidence interval (`ci95` in the JSON).
    Ci95,
    /// The min–max over its repeats, for a result without a confidence interval.
    MinMax,
}

impl BarKind {
    /// What the legend and the tables call it.
    pub fn describe(self) -> &'static str {
        match self {
            BarKind::Ci95 => "95 % confidence interval",
            BarKind::MinMax => "min–max of repeats (no 95 % interval)",
        }
    }
}

/// A vertical error bar from `low` to `high`, in the units of the point's y.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorBar {
    pub low: f64,
    pub high: f64,
    pub kind: BarKind,
}

impl ErrorBar {
    /// A bar worth drawing: finite ends, some width.
    pub fn drawable(&self) -> bool {
        self.low.is_finite() && self.high.is_finite() && self.low < self.high
    }
}

/// What is known about a point besides its value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Annotation {
    pub bar: Option<ErrorBar>,
    /// Codes of the validity warnings its result carries (`noisy`, `not-steady`, …): the point is
    /// drawn with a hollow red ring.
    pub warnings: Vec<String>,
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

    /// Annotations of the finite points, with their series.
    fn annotated(&self) -> impl Iterator<Item = (&Series, (f64, f64), &Annotation)> + '_ {
        self.series.iter().flat_map(|s| {
            s.points
                .iter()
                .enumerate()
                .filter(|(_, (x, y))| x.is_finite() && y.is_finite())
                .filter_map(move |(i, &p)| Some((s, p, s.annotation(i)?)))
        })
    }

    /// The kinds of error bar drawn, in legend order.
    pub fn bar_kinds(&self) -> Vec<BarKind> {
        let mut kinds: Vec<BarKind> = self
            .annotated()
            .filter_map(|(_, _, a)| a.bar.filter(ErrorBar::drawable).map(|b| b.kind))
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }

    /// Warning codes of the drawn points with how many points carry each, in order of first appearance.
    pub fn warning_counts(&self) -> Vec<(String, usize)> {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for (_, _, a) in self.annotated() {
            let mut codes: Vec<&String> = a.warnings.iter().collect();
            codes.sort();
            codes.dedup();
            for code in codes {
                match counts.iter_mut().find(|(c, _)| c == code) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((code.clone(), 1)),
                }
            }
        }
        counts
    }
}

/// Colour of the ring around a point whose result carries a warning: a pure red that no series uses.
pub const WARNING_RED: RGBColor = RGBColor(0xD0, 0x00, 0x00);
/// Radius of that ring: larger than every marker, so the marker stays visible inside it.
const WARNING_RING_RADIUS: i32 = 8;
/// Half the width of an error bar's caps, in pixels.
const BAR_CAP: i32 = 4;
/// Sideways nudge between the error bars of neighbouring series, and the most any bar is moved.
const BAR_DODGE: f64 = 4.0;
const MAX_DODGE: f64 = 16.0;
/// Size-axis tick labels: rows below the axis they may be staggered over, the gap between labels in
/// one row, and the height of a row (the label font is 14 px).
const LABEL_ROWS: usize = 3;
const LABEL_GAP: f64 = 6.0;
const LABEL_ROW_HEIGHT: i32 = 17;
/// Height of the x label area with one row of tick labels (plus the axis description).
const X_LABEL_AREA: u32 = 56;
const Y_LABEL_AREA: u32 = 78;
const CHART_MARGIN: u32 = 12;

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
/// Drawn into memory and encoded here, then written by the one output rule ([`super::write_atomic`]:
/// a link or device at `path` is written through, a regular file replaced whole). The bitmap
/// backend's own file output failed on a full disk with a `Debug` chain for a message
/// ("ImageError(IoError(Custom { … }))", issue 47 M36); the output rule names the file and the
/// system's reason ("No space left on device").
pub fn render_png(fig: &Figure, path: &Path) -> Result<(), PlotError> {
    register_fonts();
    let mut rgb = vec![0u8; WIDTH as usize * HEIGHT as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (WIDTH, HEIGHT)).into_drawing_area();
        draw(fig, &root)?;
        root.present().map_err(|e| err(fig, e))?;
    }
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, WIDTH, HEIGHT);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder
        .write_header()
        .and_then(|mut w| {
            w.write_image_data(&rgb)?;
            w.finish()
        })
        .map_err(|e| err(fig, format!("{}: encoding the PNG: {e}", path.display())))?;
    super::write_atomic(path, &bytes).map_err(|e| err(fig, e))
}

/// The chart every figure is drawn on: both axes f64 with the ticks given ([`TickedAxis`]).
type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<TickedAxis, TickedAxis>>;

/// Draw `fig` on `root`: the titles, the plot pane (axes, marks, reference lines), the legend pane.
fn draw<DB: DrawingBackend>(fig: &Figure, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
    let titled = draw_titles(fig, root)?;
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

    let axes = Axes::fit(fig);
    let size_labels = size_labels(root, &axes);
    let label_rows_used = size_labels
        .iter()
        .filter_map(|l| l.2)
        .max()
        .map_or(1, |r| r + 1);
    let x_label_area = X_LABEL_AREA + LABEL_ROW_HEIGHT as u32 * (label_rows_used as u32 - 1);

    let chart = ChartBuilder::on(&plot_area)
        .margin(CHART_MARGIN)
        .x_label_area_size(x_label_area)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(
            TickedAxis {
                inner: axes.x_range.clone().into(),
                bold: axes.x_ticks.clone(),
                light: axes.x_light.clone(),
            },
            y_axis(&axes.y_range, axes.log_y),
        )
        .map_err(|e| err(fig, e))?;
    let mut plot = Plot { chart, fig, axes };
    plot.draw_mesh()?;
    plot.draw_size_labels(root, &size_labels)?;

    match fig.kind {
        Kind::Lines(_) => {
            // Bars first, so lines and markers stay on top of them; rings last, so a warning does
            // not hide behind another series' line.
            plot.draw_error_bars()?;
            plot.draw_curves()?;
            plot.draw_warning_rings()?;
        }
        Kind::Bars => plot.draw_bars()?,
        Kind::Cdf => plot.draw_staircases()?,
    }
    plot.draw_references()?;

    draw_legend(fig, &legend_area).map_err(|e| err(fig, e))?;
    Ok(())
}

/// The white page with the title and, when there is one, the subtitle under it: the area left below.
fn draw_titles<DB: DrawingBackend>(
    fig: &Figure,
    root: &DrawingArea<DB, Shift>,
) -> Result<DrawingArea<DB, Shift>, PlotError> {
    root.fill(&WHITE).map_err(|e| err(fig, e))?;
    let titled = root
        .titled(&fig.title, (FONT, 21).into_font().style(FontStyle::Bold))
        .map_err(|e| err(fig, e))?;
    if fig.subtitle.is_empty() {
        return Ok(titled);
    }
    let style = (FONT, 15)
        .into_font()
        .color(&RGBColor(0x55, 0x55, 0x55))
        .pos(Pos::new(HPos::Center, VPos::Top));
    titled
        .draw(&Text::new(
            shorten(&fig.subtitle, 120),
            (WIDTH as i32 / 2, 2),
            style,
        ))
        .map_err(|e| err(fig, e))?;
    Ok(titled.margin(24, 0, 0, 0))
}

/// Where a figure's data land: each axis's scale (linear or logarithmic) and range in plot
/// coordinates, and the x axis's ticks.
struct Axes {
    kind: Kind,
    log_x: bool,
    log_y: bool,
    x_range: Range<f64>,
    y_range: Range<f64>,
    /// Ticks with a grid line and, between them, light lines (none on a size or category axis).
    x_ticks: Vec<f64>,
    x_light: Vec<f64>,
}

impl Axes {
    /// The axes that show every finite point of `fig` (and its references and error bars).
    fn fit(fig: &Figure) -> Axes {
        let points: Vec<(f64, f64)> = fig.finite_points().collect();
        let (log_y, y_range) = y_scale(fig, &points);
        let (log_x, x_range) = x_scale(fig.kind, &points);
        let (x_ticks, x_light) = x_ticks(fig.kind, &points, &x_range);
        Axes {
            kind: fig.kind,
            log_x,
            log_y,
            x_range,
            y_range,
            x_ticks,
            x_light,
        }
    }

    /// Whether x is a message size, whose tick labels [`size_labels`] places.
    fn size_axis(&self) -> bool {
        self.kind == Kind::Lines(XScale::Log2)
    }

    /// A data x in plot coordinates.
    fn to_x(&self, x: f64) -> f64 {
        plot_x(self.kind, self.log_x, x)
    }

    /// A data y in plot coordinates.
    fn to_y(&self, y: f64) -> f64 {
        if self.log_y {
            y.log10()
        } else {
            y
        }
    }
}

/// x in plot coordinates: log₂ of bytes for size axes, log₁₀ of a wide-ranging value.
fn plot_x(kind: Kind, log_x: bool, x: f64) -> f64 {
    match kind {
        Kind::Lines(XScale::Log2) => x.max(1.0).log2(),
        Kind::Cdf if log_x => x.log10(),
        _ => x,
    }
}

/// Whether the y axis is logarithmic, and its range in plot coordinates.
fn y_scale(fig: &Figure, points: &[(f64, f64)]) -> (bool, Range<f64>) {
    let bars: Vec<ErrorBar> = fig
        .annotated()
        .filter_map(|(_, _, a)| a.bar.filter(ErrorBar::drawable))
        .collect();
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
    // Per-thread bars of wall-clock beside apparent cycles/byte differ by the session count (a
    // hundred sessions: two decades), so bars get the same log axis, each rising from its bottom.
    let log_y = matches!(fig.kind, Kind::Lines(XScale::Log2) | Kind::Bars)
        && y_min > 0.0
        && y_max / y_min > LOG_SPAN;
    // The axis takes in the error bars, but a bar from a run too short to say much (an interval many
    // times its value) may not squash the points: past twice the largest value (a decade on a log
    // axis) it is cut at the edge, its cap left off to show it goes on.
    let bar_top = bars.iter().map(|b| b.high).fold(y_max, f64::max);
    let bar_bottom = bars
        .iter()
        .map(|b| b.low)
        .filter(|&l| l > 0.0)
        .fold(y_min, f64::min);
    let y_range = if log_y {
        // A bar rises from the axis's bottom: a decade below the shortest keeps it a bar, not a sliver.
        let lo = if fig.kind == Kind::Bars {
            y_min / 10.0
        } else {
            bar_bottom.max(y_min / 10.0)
        };
        let hi = bar_top.min(y_max * 10.0);
        (lo.log10() - 0.1)..(hi.log10() + 0.1)
    } else {
        0.0..bar_top.min(2.0 * y_max) * 1.1
    };
    (log_y, y_range)
}

/// Whether the x axis is logarithmic (a distribution's), and its range in plot coordinates.
fn x_scale(kind: Kind, points: &[(f64, f64)]) -> (bool, Range<f64>) {
    let (x_lo, x_hi) = points
        .iter()
        .map(|p| p.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    // Per-thread cycles/byte of thousands of sessions can run from a few (busy threads) to thousands
    // (starved ones): the same reason as a log y axis in [`y_scale`].
    let log_x = kind == Kind::Cdf && x_lo > 0.0 && x_hi / x_lo > LOG_SPAN;
    let (lo, hi) = (plot_x(kind, log_x, x_lo), plot_x(kind, log_x, x_hi));
    let x_range = match kind {
        Kind::Lines(XScale::Log2) => (lo - 0.3)..(hi + 0.3),
        Kind::Lines(XScale::Integer) => (lo - 0.3).min(hi - 1.0)..(hi + 0.3).max(lo + 1.0),
        // Every step of the ladder, so a missing level shows as a gap, not a shorter axis.
        Kind::Lines(XScale::Categories(labels)) => -0.4..(labels.len() as f64 - 0.6),
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
    (log_x, x_range)
}

/// The x axis's ticks and light lines. On a size axis, one tick at every measured size (labelled by
/// [`size_labels`], staggered where they would collide); on a category axis one per category;
/// elsewhere plotters' choice, kept to whole numbers on a count axis.
fn x_ticks(kind: Kind, points: &[(f64, f64)], x_range: &Range<f64>) -> (Vec<f64>, Vec<f64>) {
    if kind == Kind::Lines(XScale::Log2) {
        return (size_ticks(points), Vec::new());
    }
    if let Kind::Lines(XScale::Categories(labels)) = kind {
        return ((0..labels.len()).map(|i| i as f64).collect(), Vec::new());
    }
    let count = match kind {
        Kind::Cdf => 10,
        _ => ((x_range.end - x_range.start).ceil() as usize + 1).clamp(2, 20),
    };
    let mut bold = RangedCoordf64::from(x_range.clone()).key_points(count);
    // Sessions and counts are whole: a tick at 0.5 would only be an unlabelled mark.
    if kind != Kind::Cdf {
        bold.retain(|v| (v - v.round()).abs() < 1e-6);
    }
    let light = bold.windows(2).map(|w| (w[0] + w[1]) / 2.0).collect();
    (bold, light)
}

/// The font of tick labels.
fn tick_font() -> FontDesc<'static> {
    (FONT, 14).into_font()
}

/// A size axis's tick labels as (tick, text, row below the axis; `None`: no row has room), measured
/// with the font they are drawn in; none on any other axis, whose labels the mesh draws.
fn size_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    axes: &Axes,
) -> Vec<(f64, String, Option<usize>)> {
    if !axes.size_axis() {
        return Vec::new();
    }
    let x_range = &axes.x_range;
    let span = x_range.end - x_range.start;
    let plot_px = f64::from(WIDTH - LEGEND_WIDTH - 2 * CHART_MARGIN - Y_LABEL_AREA);
    let texts: Vec<String> = axes
        .x_ticks
        .iter()
        .map(|&t| size_text(2f64.powf(t)))
        .collect();
    let placed: Vec<(f64, f64)> = axes
        .x_ticks
        .iter()
        .zip(&texts)
        .map(|(&t, text)| {
            let width = root
                .estimate_text_size(text, &tick_font().into())
                .map_or(8.0 * text.len() as f64, |(w, _)| f64::from(w));
            ((t - x_range.start) / span * plot_px, width)
        })
        .collect();
    let rows = label_rows(&placed);
    axes.x_ticks
        .iter()
        .zip(texts)
        .zip(rows)
        .map(|((&t, text), row)| (t, text, row))
        .collect()
}

/// A figure on its chart, with where its data land: what each drawing step needs.
struct Plot<'a, 'f, DB: DrawingBackend> {
    chart: Chart<'a, DB>,
    fig: &'f Figure,
    axes: Axes,
}

impl<DB: DrawingBackend> Plot<'_, '_, DB> {
    /// Grid, axis descriptions and tick labels (but a size axis's: [`Plot::draw_size_labels`] draws
    /// those).
    fn draw_mesh(&mut self) -> Result<(), PlotError> {
        let (x_top, y_top) = (self.axes.x_range.end, self.axes.y_range.end);
        let x_format = |v: &f64| -> String {
            if self.fig.kind == Kind::Cdf {
                return if self.axes.log_x {
                    let value = 10f64.powf(*v);
                    y_text(value, value * 10.0)
                } else {
                    y_text(*v, x_top)
                };
            }
            if let Kind::Lines(scale @ XScale::Categories(_)) = self.fig.kind {
                return scale.category(*v).unwrap_or_default().to_string();
            }
            // A size axis's labels are drawn below, where they can be staggered.
            if self.axes.size_axis() || (v - v.round()).abs() > 1e-6 {
                return String::new();
            }
            format!("{}", v.round() as i64)
        };
        let y_format = |v: &f64| {
            if self.axes.log_y {
                let value = 10f64.powf(*v);
                y_text(value, value * 10.0)
            } else {
                y_text(*v, y_top)
            }
        };
        self.chart
            .configure_mesh()
            .x_desc(if self.axes.log_x {
                format!("{} (log scale)", self.fig.x_label)
            } else {
                self.fig.x_label.clone()
            })
            .y_desc(if self.axes.log_y {
                format!("{} (log scale)", self.fig.y_label)
            } else {
                self.fig.y_label.clone()
            })
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .max_light_lines(1)
            .light_line_style(RGBColor(0xF2, 0xF2, 0xF2))
            .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
            .draw()
            .map_err(|e| err(self.fig, e))
    }

    /// A size axis's tick labels, in the rows [`size_labels`] gave them, below the axis.
    fn draw_size_labels(
        &self,
        root: &DrawingArea<DB, Shift>,
        labels: &[(f64, String, Option<usize>)],
    ) -> Result<(), PlotError> {
        for (t, text, row) in labels {
            let Some(row) = row else { continue };
            let (px, py) = self
                .chart
                .plotting_area()
                .map_coordinate(&(*t, self.axes.y_range.start));
            let style = tick_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top));
            root.draw(&Text::new(
                text.clone(),
                (px, py + 10 + LABEL_ROW_HEIGHT * *row as i32),
                style,
            ))
            .map_err(|e| err(self.fig, e))?;
        }
        Ok(())
    }

    /// The error bars of a line figure. Series measured at the same sizes would stack their bars on one
    /// line: each is nudged sideways a few pixels.
    fn draw_error_bars(&mut self) -> Result<(), PlotError> {
        let (y_lo, y_hi) = (self.axes.y_range.start, self.axes.y_range.end);
        let middle = (self.fig.series.len() as f64 - 1.0) / 2.0;
        for (k, s) in self.fig.series.iter().enumerate() {
            let c = color(s.color);
            let dx = ((k as f64 - middle) * BAR_DODGE).clamp(-MAX_DODGE, MAX_DODGE) as i32;
            for (i, &(x, _)) in s.points.iter().enumerate() {
                let Some(bar) = s
                    .annotation(i)
                    .and_then(|a| a.bar)
                    .filter(|b| x.is_finite() && b.drawable())
                else {
                    continue;
                };
                let x = self.axes.to_x(x);
                // Either end beyond the axis is cut there, without its cap.
                let end = |v: f64| {
                    if self.axes.log_y && v <= 0.0 {
                        (y_lo, false)
                    } else {
                        let v = self.axes.to_y(v);
                        (v.clamp(y_lo, y_hi), (y_lo..=y_hi).contains(&v))
                    }
                };
                let ((low, low_cap), (high, high_cap)) = (end(bar.low), end(bar.high));
                // In pixels from the low end, so the nudge is the same at every scale.
                let rise =
                    self.chart.backend_coord(&(x, high)).1 - self.chart.backend_coord(&(x, low)).1;
                let style = c.stroke_width(2);
                let mut segments = vec![vec![(dx, 0), (dx, rise)]];
                for (dy, cap) in [(0, low_cap), (rise, high_cap)] {
                    if cap {
                        segments.push(vec![(dx - BAR_CAP, dy), (dx + BAR_CAP, dy)]);
                    }
                }
                self.chart
                    .draw_series(segments.into_iter().map(|segment| {
                        EmptyElement::at((x, low)) + PathElement::new(segment, style)
                    }))
                    .map_err(|e| err(self.fig, e))?;
            }
        }
        Ok(())
    }

    /// Each series of a line figure: its line (solid or dashed by variant), then its markers.
    fn draw_curves(&mut self) -> Result<(), PlotError> {
        for s in &self.fig.series {
            let c = color(s.color);
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|&(x, y)| (self.axes.to_x(x), self.axes.to_y(y)))
                .collect();
            self.draw_line(pts.clone(), s.variant, c)?;
            self.chart
                .draw_series(pts.iter().map(|&p| marker(s.variant, p, c)))
                .map_err(|e| err(self.fig, e))?;
        }
        Ok(())
    }

    /// One line through `points` (in plot coordinates), in the dash pattern of `variant`.
    fn draw_line(
        &mut self,
        points: Vec<(f64, f64)>,
        variant: usize,
        c: RGBColor,
    ) -> Result<(), PlotError> {
        match dash(variant) {
            None => self
                .chart
                .draw_series(LineSeries::new(points, c.stroke_width(2)))
                .map(|_| ()),
            Some((on, off)) => self
                .chart
                .draw_series(DashedLineSeries::new(points, on, off, c.stroke_width(2)))
                .map(|_| ()),
        }
        .map_err(|e| err(self.fig, e))
    }

    /// A red ring around every point whose result carries a warning.
    fn draw_warning_rings(&mut self) -> Result<(), PlotError> {
        let rings = self
            .fig
            .annotated()
            .filter(|(_, _, a)| !a.warnings.is_empty())
            .map(|(_, (x, y), _)| warning_ring((self.axes.to_x(x), self.axes.to_y(y))));
        self.chart
            .draw_series(rings)
            .map_err(|e| err(self.fig, e))?;
        Ok(())
    }

    /// Grouped bars: the series side by side within each whole x.
    fn draw_bars(&mut self) -> Result<(), PlotError> {
        let groups = self.fig.series.len().max(1) as f64;
        let width = 0.8 / groups;
        // On a log axis a bar rises from the axis's bottom, which stands for no value at all.
        let base = if self.axes.log_y {
            self.axes.y_range.start
        } else {
            0.0
        };
        for (i, s) in self.fig.series.iter().enumerate() {
            let c = color(s.color);
            let left = -0.4 + width * i as f64;
            self.chart
                .draw_series(
                    s.points
                        .iter()
                        .filter(|(x, y)| x.is_finite() && y.is_finite())
                        .map(|&(x, y)| {
                            Rectangle::new(
                                [(x + left, base), (x + left + width, self.axes.to_y(y))],
                                c.filled(),
                            )
                        }),
                )
                .map_err(|e| err(self.fig, e))?;
        }
        Ok(())
    }

    /// Each series of a distribution as its staircase: flat between values, a step of 1/n at each; it
    /// starts from 0 at the smallest value, since no session lies below it.
    fn draw_staircases(&mut self) -> Result<(), PlotError> {
        for s in &self.fig.series {
            let c = color(s.color);
            let mut stairs: Vec<(f64, f64)> = Vec::with_capacity(2 * s.points.len());
            let mut below = 0.0;
            for &(x, y) in s
                .points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
            {
                stairs.push((self.axes.to_x(x), below));
                stairs.push((self.axes.to_x(x), y));
                below = y;
            }
            self.draw_line(stairs, s.variant, c)?;
        }
        Ok(())
    }

    /// The horizontal reference lines, dashed across the whole plot, in the colours after the series'.
    fn draw_references(&mut self) -> Result<(), PlotError> {
        let x_span = self.chart.x_range();
        for (k, r) in self.fig.references.iter().enumerate() {
            let c = color(self.fig.series.len() + k);
            self.chart
                .draw_series(DashedLineSeries::new(
                    vec![
                        (x_span.start, self.axes.to_y(r.y)),
                        (x_span.end, self.axes.to_y(r.y)),
                    ],
                    8,
                    5,
                    c.stroke_width(2),
                ))
                .map_err(|e| err(self.fig, e))?;
        }
        Ok(())
    }
}

/// An f64 axis with the ticks given: plotters' own `WithKeyPoints` over an f64 range has no label
/// formatter, so the mesh could not be drawn with it.
struct TickedAxis {
    inner: RangedCoordf64,
    bold: Vec<f64>,
    light: Vec<f64>,
}

impl Ranged for TickedAxis {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
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

/// The legend's closing rows: what error bars and red rings mean, when the figure draws any.
enum LegendKey {
    Bar(BarKind),
    Warned,
    /// The warning codes, with how many points carry each.
    Codes(String),
}

fn legend_keys(fig: &Figure) -> Vec<LegendKey> {
    let mut keys: Vec<LegendKey> = fig.bar_kinds().into_iter().map(LegendKey::Bar).collect();
    let warned = fig.warning_counts();
    if !warned.is_empty() {
        keys.push(LegendKey::Warned);
        // Every code is named, over as many lines as it takes (there are ten codes at most).
        let mut line = String::new();
        for (code, n) in &warned {
            let item = format!("{code} ×{n}");
            if !line.is_empty() && line.chars().count() + 2 + item.chars().count() > LEGEND_CHARS {
                keys.push(LegendKey::Codes(format!("{line},")));
                line.clear();
            }
            if !line.is_empty() {
                line.push_str(", ");
            }
            line.push_str(&item);
        }
        keys.push(LegendKey::Codes(line));
    }
    keys
}

/// Legend layout: the left edge of its samples, the baseline of its first row, and the row height.
const LEGEND_X: i32 = 10;
const LEGEND_TOP: i32 = 22;
const LEGEND_ROW: i32 = 21;

fn draw_legend<DB: DrawingBackend>(
    fig: &Figure,
    area: &DrawingArea<DB, Shift>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let style = (FONT, 13).into_font().color(&BLACK);
    let keys = legend_keys(fig);
    // Too many to list: say how many more rather than overflow the pane. The keys to bars and rings
    // always show: without them the marks cannot be read.
    let max_rows = ((HEIGHT as i32 - 80) / LEGEND_ROW) as usize - keys.len();
    let y = draw_legend_entries(fig, area, &style, max_rows)?;
    draw_legend_keys(area, &style, keys, y)
}

/// The legend's rows for the series and then the references, each a sample and its name, up to
/// `max_rows`; returns the baseline of the next row.
fn draw_legend_entries<DB: DrawingBackend>(
    fig: &Figure,
    area: &DrawingArea<DB, Shift>,
    style: &TextStyle,
    max_rows: usize,
) -> Result<i32, DrawingAreaErrorKind<DB::ErrorType>> {
    let mut y = LEGEND_TOP;
    let rows = fig.series.len() + fig.references.len();
    let entries = fig
        .series
        .iter()
        .map(Some)
        .chain(fig.references.iter().map(|_| None));
    for (i, series) in entries.enumerate() {
        if i + 1 == max_rows && rows > max_rows {
            area.draw(&Text::new(
                format!("… and {} more (see the table)", rows - i),
                (LEGEND_X, y - 7),
                style.clone(),
            ))?;
            y += LEGEND_ROW;
            break;
        }
        let name = match series {
            Some(s) => {
                draw_series_sample(fig.kind, s, area, y)?;
                &s.name
            }
            None => {
                let k = i - fig.series.len();
                let c = color(fig.series.len() + k);
                for seg in sample_line(y, c, Some((8, 5))) {
                    area.draw(&seg)?;
                }
                &fig.references[k].name
            }
        };
        area.draw(&Text::new(
            shorten(name, LEGEND_CHARS),
            (LEGEND_X + 38, y - 8),
            style.clone(),
        ))?;
        y += LEGEND_ROW;
    }
    Ok(y)
}

/// A series' sample in the legend row at `y`, drawn as the figure draws the series.
fn draw_series_sample<DB: DrawingBackend>(
    kind: Kind,
    s: &Series,
    area: &DrawingArea<DB, Shift>,
    y: i32,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let c = color(s.color);
    match kind {
        Kind::Lines(_) => {
            for seg in sample_line(y, c, dash(s.variant)) {
                area.draw(&seg)?;
            }
            area.draw(&marker(s.variant, (LEGEND_X + 15, y), c))?;
        }
        Kind::Cdf => {
            for seg in sample_line(y, c, dash(s.variant)) {
                area.draw(&seg)?;
            }
        }
        Kind::Bars => {
            area.draw(&Rectangle::new(
                [(LEGEND_X + 4, y - 7), (LEGEND_X + 26, y + 7)],
                c.filled(),
            ))?;
        }
    }
    Ok(())
}

/// A 30-pixel sample of a line at `y`, solid or in the dash pattern given.
fn sample_line(
    y: i32,
    c: RGBColor,
    pattern: Option<(u32, u32)>,
) -> impl Iterator<Item = PathElement<(i32, i32)>> {
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
    segments.into_iter().map(move |(a, b)| {
        PathElement::new(
            vec![(LEGEND_X + a, y), (LEGEND_X + b, y)],
            c.stroke_width(2),
        )
    })
}

/// The legend's closing rows from `y` on: what error bars and red rings mean, and the warning codes.
fn draw_legend_keys<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    style: &TextStyle,
    keys: Vec<LegendKey>,
    mut y: i32,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let grey = RGBColor(0x55, 0x55, 0x55);
    for key in keys {
        let text = match key {
            LegendKey::Bar(kind) => {
                let bar = grey.stroke_width(2);
                let cx = LEGEND_X + 15;
                area.draw(&PathElement::new(vec![(cx, y - 8), (cx, y + 8)], bar))?;
                for cy in [y - 8, y + 8] {
                    area.draw(&PathElement::new(
                        vec![(cx - BAR_CAP, cy), (cx + BAR_CAP, cy)],
                        bar,
                    ))?;
                }
                format!("bar: {}", kind.describe())
            }
            LegendKey::Warned => {
                area.draw(&Circle::new((LEGEND_X + 15, y), 4, grey.filled()))?;
                area.draw(&warning_ring((LEGEND_X + 15, y)))?;
                "red ring: the result carries a warning".to_string()
            }
            LegendKey::Codes(codes) => codes,
        };
        area.draw(&Text::new(
            shorten(&text, LEGEND_CHARS),
            (LEGEND_X + 38, y - 8),
            style.clone(),
        ))?;
        y += LEGEND_ROW;
    }
    Ok(())
}

/// The hollow red ring around a point whose result carries a warning.
fn warning_ring<C>(at: C) -> Circle<C, i32> {
    Circle::new(at, WARNING_RING_RADIUS, WARNING_RED.stroke_width(2))
}

/// The y axis: plotters' ten ticks on a linear axis; on a log₁₀ axis ticks at 1, 2 and 5 times a power
/// of ten (only the powers when the axis spans more than five decades), where plotters' even steps in
/// the logarithm would label 3.16 and 31.6.
fn y_axis(range: &std::ops::Range<f64>, log: bool) -> TickedAxis {
    let inner: RangedCoordf64 = range.clone().into();
    let bold = if log {
        let steps: &[f64] = if range.end - range.start > 5.0 {
            &[1.0]
        } else {
            &[1.0, 2.0, 5.0]
        };
        let mut ticks = Vec::new();
        for decade in range.start.floor() as i32..=range.end.ceil() as i32 {
            for step in steps {
                let t = (step * 10f64.powi(decade)).log10();
                if range.contains(&t) {
                    ticks.push(t);
                }
            }
        }
        ticks
    } else {
        inner.key_points(10)
    };
    // One light line between ticks, as the mesh drew before.
    let light = bold.windows(2).map(|w| (w[0] + w[1]) / 2.0).collect();
    TickedAxis { inner, bold, light }
}

/// Tick positions of a size axis (log₂ of bytes): every distinct measured size.
fn size_ticks(points: &[(f64, f64)]) -> Vec<f64> {
    let mut ticks: Vec<f64> = points
        .iter()
        .map(|p| p.0)
        .filter(|x| x.is_finite())
        .map(|x| x.max(1.0).log2())
        .collect();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    ticks
}

/// Rows for tick labels given as (centre, width) in pixels from left to right: each goes to the first
/// row where it clears the last label by [`LABEL_GAP`], so neighbours such as 512 and 576 are
/// staggered rather than overprinted; `None` when no row of [`LABEL_ROWS`] has room (its tick stays,
/// and the value is in the table behind the figure).
fn label_rows(labels: &[(f64, f64)]) -> Vec<Option<usize>> {
    let mut right_edge = [f64::NEG_INFINITY; LABEL_ROWS];
    labels
        .iter()
        .map(|&(centre, width)| {
            let row = right_edge
                .iter()
                .position(|&edge| centre - width / 2.0 >= edge + LABEL_GAP)?;
            right_edge[row] = centre + width / 2.0;
            Some(row)
        })
        .collect()
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
        for (bytes, shown) in [
            (16.0, "16"),
            (65536.0, "64K"),
            (1500.0, "1500"),
            (1048576.0, "1M"),
        ] {
            assert_eq!(size_text(bytes), shown);
        }
    }

    /// The text of every `<text>` element of an SVG, trimmed.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..];
                Some(body[..body.find("</text>")?].trim().to_string())
            })
            .collect()
    }

    /// Rings drawn in [`WARNING_RED`].
    fn red_rings(svg: &str) -> usize {
        svg.split("<circle")
            .skip(1)
            .filter(|c| c[..c.find('>').unwrap_or(c.len())].contains("stroke=\"#D00000\""))
            .count()
    }

    fn sized(sizes: &[f64]) -> Figure {
        let mut fig = sample();
        fig.series = vec![Series::new(
            "a",
            sizes.iter().map(|&x| (x, 1000.0 / x + 1.0)).collect(),
            0,
        )];
        fig
    }

    #[test]
    fn a_size_axis_has_a_tick_label_at_every_measured_size_and_no_other() {
        let svg = render_svg(&sized(&[40.0, 576.0, 1500.0, 4096.0])).unwrap();
        let labels = texts(&svg);
        for want in ["40", "576", "1500", "4K"] {
            assert_eq!(
                labels.iter().filter(|l| *l == want).count(),
                1,
                "{want} in {labels:?}"
            );
        }
        // Powers of two in between were not measured: no tick may suggest they were.
        for unmeasured in ["32", "64", "512", "1K", "2K"] {
            assert!(
                !labels.iter().any(|l| l == unmeasured),
                "{unmeasured}: {labels:?}"
            );
        }
    }

    #[test]
    fn tick_labels_that_would_collide_are_staggered_not_overprinted() {
        // 30 px wide labels: 0 and 100 fit in one row; 110 collides with 100, 115 with both.
        let rows = label_rows(&[(0.0, 30.0), (100.0, 30.0), (110.0, 30.0), (115.0, 30.0)]);
        assert_eq!(rows, [Some(0), Some(0), Some(1), Some(2)]);
        // A fourth label on top of three full rows gets none (its tick stays).
        let crowded = label_rows(&[(0.0, 30.0), (1.0, 30.0), (2.0, 30.0), (3.0, 30.0)]);
        assert_eq!(crowded, [Some(0), Some(1), Some(2), None]);
        // Far enough apart, a later label returns to the first row.
        let back = label_rows(&[(0.0, 30.0), (5.0, 30.0), (200.0, 30.0)]);
        assert_eq!(back, [Some(0), Some(1), Some(0)]);
        // The default sweep's 512 and 576 (and 1K, 1500) both get a label.
        let svg = render_svg(&sized(&[
            16.0, 32.0, 40.0, 64.0, 128.0, 256.0, 512.0, 576.0, 1024.0, 1500.0, 2048.0, 4096.0,
            8192.0, 16384.0, 32768.0, 65536.0,
        ]))
        .unwrap();
        let labels = texts(&svg);
        for want in ["16", "40", "512", "576", "1K", "1500", "64K"] {
            assert!(labels.iter().any(|l| l == want), "{want} in {labels:?}");
        }
    }

    /// An error bar of `kind` from `low` to `high`.
    fn bar(kind: BarKind, low: f64, high: f64) -> Option<ErrorBar> {
        Some(ErrorBar { low, high, kind })
    }

    fn annotated(bars: [Option<ErrorBar>; 3], warnings: [&[&str]; 3]) -> Figure {
        let mut fig = sized(&[16.0, 64.0, 4096.0]);
        fig.series[0].annotations = bars
            .into_iter()
            .zip(warnings)
            .map(|(bar, w)| Annotation {
                bar,
                warnings: w.iter().map(|c| c.to_string()).collect(),
            })
            .collect();
        fig
    }

    #[test]
    fn warned_points_are_ringed_in_red_and_the_legend_says_what_bars_and_rings_mean() {
        let ci = |low, high| bar(BarKind::Ci95, low, high);
        let fig = annotated(
            [ci(60.0, 65.0), ci(16.0, 17.5), None],
            [&["noisy"], &[], &["noisy", "over-utilised"]],
        );
        assert_eq!(fig.bar_kinds(), [BarKind::Ci95]);
        assert_eq!(
            fig.warning_counts(),
            [("noisy".to_string(), 2), ("over-utilised".to_string(), 1)]
        );
        let svg = render_svg(&fig).unwrap();
        // Two points carry warnings, and the legend shows the ring once.
        assert_eq!(red_rings(&svg), 3);
        let labels = texts(&svg);
        for want in [
            "bar: 95 % confidence interval",
            "red ring: the result carries a warning",
            "noisy ×2, over-utilised ×1",
        ] {
            assert!(labels.iter().any(|l| l == want), "{want} in {labels:?}");
        }

        // Without annotations, neither marks nor keys.
        let plain = render_svg(&sized(&[16.0, 64.0, 4096.0])).unwrap();
        assert_eq!(red_rings(&plain), 0);
        assert!(!plain.contains("bar: ") && !plain.contains("red ring"));

        // Min–max bars say so; a zero-width bar (one repeat) is no bar at all.
        let minmax = |low, high| bar(BarKind::MinMax, low, high);
        let fig = annotated(
            [minmax(60.0, 66.0), minmax(17.0, 17.0), None],
            [&[], &[], &[]],
        );
        assert_eq!(fig.bar_kinds(), [BarKind::MinMax]);
        let fig = annotated([minmax(60.0, 60.0), None, None], [&[], &[], &[]]);
        assert!(fig.bar_kinds().is_empty());
    }

    #[test]
    fn a_bar_far_wider_than_the_values_does_not_squash_the_points() {
        // Values 1.2…63.5 on a log axis; one interval reaches 10⁶ (a run too short to say much).
        let huge = bar(BarKind::Ci95, 1.0, 1e6);
        let svg = render_svg(&annotated([huge, None, None], [&[], &[], &[]])).unwrap();
        let numbers: Vec<f64> = texts(&svg)
            .iter()
            .filter_map(|t| t.parse().ok())
            .filter(|&v: &f64| v != 16.0 && v != 64.0)
            .collect();
        let top = numbers.iter().copied().fold(0.0, f64::max);
        // The axis stops within a decade of the largest value (the bar is cut there).
        assert!((63.5..=635.0).contains(&top), "y labels {numbers:?}");
    }
}
