//! The report as a browser renders it: a tiny real run, `macbench report`, then headless Chromium takes
//! a screenshot, which must show the figures, and dumps the DOM, which must hold every figure's SVG and
//! the tables. `tests/report.rs` checks the HTML text; this checks that a browser draws it.
//!
//! Needs Chromium (Debian: `apt-get install chromium`); without it the test says `SKIP:` with the reason,
//! and `MACBENCH_REQUIRE_BACKENDS=chromium` makes that a failure. `MACBENCH_SCREENSHOT_DIR=DIR` keeps
//! the page, the results and the screenshot there, to look at.

// Tests may unwrap (Cargo.toml [lints]; clippy.toml covers `#[test]` bodies, this the helpers).
#![allow(clippy::unwrap_used)]

mod common;

use scraper::{Html, Selector};
use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Names Chromium is installed under (Debian, Ubuntu, Google's package).
const BROWSERS: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];

/// The second series' colour (Tableau orange, `plots::color(1)`): the page's own styles use no such
/// colour, so its pixels in the screenshot can only come from a figure.
const SECOND_SERIES: [u8; 3] = [0xF2, 0x8E, 0x2B];

/// A hang guard, not a measurement: Chromium renders this page in about a second.
const BROWSER_DEADLINE: Duration = Duration::from_secs(120);

fn browser() -> Option<&'static str> {
    BROWSERS.into_iter().find(|name| {
        Command::new(name)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The headless browser installed here, or `None` after a `SKIP:` line saying none is.
fn browser_or_skip() -> Option<&'static str> {
    let found = browser();
    if common::skip_unless(
        found.is_some(),
        "chromium",
        "no headless Chromium (chromium, chromium-browser or google-chrome; Debian: apt-get install chromium)",
    ) {
        return None;
    }
    found
}

/// Run headless Chromium with `extra` arguments on `page`; its output once it exits, or a panic
/// when it outlives [`BROWSER_DEADLINE`].
fn headless(browser: &str, profile: &Path, extra: &[String], page: &Path) -> Output {
    let mut child = Command::new(browser)
        .args("--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars --window-size=1280,2000".split_whitespace())
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read stdout on a thread so a large DOM cannot fill the pipe while we wait.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).map(|_| v)
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut v).map(|_| v)
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > BROWSER_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{browser} {extra:?} still running after {BROWSER_DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: out.join().unwrap().unwrap(),
        stderr: err.join().unwrap().unwrap(),
    }
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

#[test]
fn chromium_renders_the_report_with_its_figures_and_tables() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let page = dir.path().join("report.html");
    // Two backends of one algorithm: two series, so the second one's colour marks drawn figures.
    // On the fake engine: the page is under test, so the run must pass its checks whatever this
    // machine is doing.
    let run = common::fake_run("run --alg hmac-sha256 --backend openssl,rustcrypto")
        .args("--sizes 64,1024 --sessions 1 --duration 50ms".split_whitespace())
        .args("--repeat 2 --no-harness -q --json".split_whitespace())
        .arg(&json)
        .output()
        .unwrap();
    common::ran(&run, &common::results_at(&json));
    common::macbench()
        .arg("report")
        .arg(&json)
        .arg("-o")
        .arg(&page)
        .assert()
        .success();

    let screenshot = dir.path().join("report.png");
    let profile = tempfile::tempdir().unwrap();
    let shot = headless(
        browser,
        profile.path(),
        &[format!("--screenshot={}", screenshot.display())],
        &page,
    );
    assert!(
        shot.status.success() && screenshot.exists(),
        "{browser} --screenshot: {}",
        String::from_utf8_lossy(&shot.stderr)
    );
    if let Some(keep) = std::env::var_os("MACBENCH_SCREENSHOT_DIR") {
        let keep = Path::new(&keep);
        std::fs::create_dir_all(keep).unwrap();
        for f in [&json, &page, &screenshot] {
            std::fs::copy(f, keep.join(f.file_name().unwrap())).unwrap();
        }
    }

    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&screenshot).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1280, 2000));
    let channels = info.line_size / info.width as usize;
    assert!(channels >= 3, "{:?}", info.color_type);
    let mut colours: HashMap<[u8; 3], usize> = HashMap::new();
    for px in buf[..info.buffer_size()].chunks(channels) {
        *colours.entry([px[0], px[1], px[2]]).or_default() += 1;
    }
    let pixels = (info.width * info.height) as usize;
    let white = colours.get(&[0xFF; 3]).copied().unwrap_or(0);
    // Not blank: the first screen holds text, a table and a figure (measured: ~2000 colours, 13 %
    // of the pixels not white; a blank page has one colour).
    assert!(colours.len() > 256, "{} distinct colours", colours.len());
    assert!(
        white < pixels * 97 / 100,
        "{white} of {pixels} pixels white"
    );
    // The figures are drawn, not only the tables: the second series' line and markers are there.
    let second = colours.get(&SECOND_SERIES).copied().unwrap_or(0);
    assert!(second > 200, "{second} pixels of the second series' colour");

    let dump = headless(browser, profile.path(), &["--dump-dom".to_string()], &page);
    assert!(
        dump.status.success(),
        "{browser} --dump-dom: {}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let dom = Html::parse_document(&String::from_utf8(dump.stdout).unwrap());
    let figures: Vec<_> = dom.select(&sel("figure.plot")).collect();
    let ids: Vec<&str> = figures
        .iter()
        .filter_map(|f| f.value().attr("id"))
        .collect();
    assert_eq!(
        ids,
        [
            "cpb-absolute",
            "cpb-apparent",
            "threads-absolute",
            "threads-apparent"
        ]
    );
    for f in &figures {
        let svgs: Vec<_> = f.select(&sel("svg[role=\"img\"]")).collect();
        assert_eq!(svgs.len(), 1, "one SVG in {:?}", f.value().attr("id"));
        assert!(
            svgs[0].select(&sel("text")).count() > 10,
            "axis labels and legend in {:?}",
            f.value().attr("id")
        );
        assert!(
            f.select(&sel("table.data tbody tr")).next().is_some(),
            "the numbers behind {:?}",
            f.value().attr("id")
        );
    }
    // The size axis labels the two sizes measured.
    let ticks: Vec<String> = dom
        .select(&sel("#cpb-absolute svg text"))
        .map(|t| t.text().collect::<String>().trim().to_string())
        .filter(|t| t.parse::<u32>().is_ok() || t.ends_with('K'))
        .collect();
    assert!(ticks.contains(&"64".to_string()) && ticks.contains(&"1K".to_string()));
    assert_eq!(dom.select(&sel("#results-table tbody tr")).count(), 4);
    assert!(dom.select(&sel("#hosts table.kv")).next().is_some());
}

/// The pixels of each colour in a PNG.
fn colour_counts(path: &Path) -> HashMap<[u8; 3], usize> {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.line_size / info.width as usize;
    let mut colours: HashMap<[u8; 3], usize> = HashMap::new();
    for px in buf[..info.buffer_size()].chunks(channels) {
        *colours.entry([px[0], px[1], px[2]]).or_default() += 1;
    }
    colours
}

/// A reproduction's report as a browser renders it: the claims table comes first, each claim links
/// to the paper figures that decide it, and Figs. 8–9's analogue draws VMAC-AES128's 100 threads as
/// bars — wall-clock, absolute and apparent cycles/byte per thread, as the paper draws them. The step
/// files are constructed (tests/common: every step covers its flags), so no timing is involved;
/// `reproduce --resume` judges them and writes the report and the PNGs named after the paper's figures.
#[test]
fn chromium_shows_a_reproductions_claims_first_and_vmac_per_thread_bars() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    for (step, mut doc) in common::constructed_steps(&macbench::reproduce::rashwan::STUDY) {
        // The step's own scenarios (backend, cores, …), so `--resume` keeps the file as the step's.
        common::as_step(&mut doc, &macbench::reproduce::rashwan::STUDY, &step);
        std::fs::write(
            out.join(format!("{step}.json")),
            serde_json::to_string(&doc).unwrap(),
        )
        .unwrap();
    }
    common::exits_0(
        common::macbench()
            .args(["reproduce", "rashwan-mobile", "--resume"])
            .arg(&out),
    );
    for png in [
        "fig04-absolute-hw",
        "fig06-absolute-sw",
        "fig08-threads-one-core",
        "fig10-threads-all-cores",
    ] {
        assert!(
            out.join("figures").join(format!("{png}.png")).is_file(),
            "{png}.png"
        );
    }
    let page = out.join("report.html");
    if let Some(keep) = std::env::var_os("MACBENCH_SCREENSHOT_DIR") {
        let keep = Path::new(&keep).join("reproduction");
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::copy(&page, keep.join("report.html")).unwrap();
        let png = out.join("figures/fig08-threads-one-core.png");
        std::fs::copy(&png, keep.join("fig08-threads-one-core.png")).unwrap();
    }

    let profile = tempfile::tempdir().unwrap();
    let dump = headless(browser, profile.path(), &["--dump-dom".to_string()], &page);
    assert!(
        dump.status.success(),
        "{browser} --dump-dom: {}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let dom = Html::parse_document(&String::from_utf8(dump.stdout).unwrap());
    // The claims first, then the paper's figures, then the report's own.
    let sections: Vec<&str> = dom
        .select(&sel("body > section"))
        .filter_map(|s| s.value().attr("id"))
        .collect();
    assert_eq!(
        sections[..3],
        ["claims", "paper", "figures"],
        "{sections:?}"
    );
    // Each claim's links lead to a paper figure on the page, and the per-thread claim has one.
    let links: Vec<&str> = dom
        .select(&sel("#claims td.figures a"))
        .filter_map(|a| a.value().attr("href"))
        .collect();
    assert!(!links.is_empty());
    for link in &links {
        let id = link.trim_start_matches('#');
        assert!(
            dom.select(&sel(&format!("div.paper[id=\"{id}\"]")))
                .next()
                .is_some(),
            "{link} leads nowhere"
        );
    }
    let uneven = dom
        .select(&sel("#claim-rashwan-mobile-uneven-scheduling td.figures a"))
        .map(|a| a.value().attr("href").unwrap())
        .collect::<Vec<_>>();
    assert_eq!(uneven, ["#fig08-threads-one-core"]);
    // Figs. 8–9: VMAC-AES128, 100 threads, one bar per thread for each of the three quantities.
    let fig = dom
        .select(&sel("#fig08-threads-one-core figure.paper"))
        .next()
        .expect("Figs. 8–9 drawn");
    let svg = fig.select(&sel("svg[role=\"img\"]")).next().unwrap();
    let title = svg.value().attr("aria-label").unwrap();
    assert!(
        title.contains("VMAC-AES128") && title.contains("100 threads"),
        "{title}"
    );
    let texts: String = svg.select(&sel("text")).flat_map(|t| t.text()).collect();
    assert!(texts.contains("vmac-aes128-64"), "{texts}");
    assert!(texts.contains("100 sessions"), "{texts}");
    for i in 0..3 {
        let c = macbench::report::plots::color(i);
        let fill = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        let bars = svg
            .select(&sel("rect"))
            .filter(|r| {
                r.value()
                    .attr("fill")
                    .is_some_and(|f| f.eq_ignore_ascii_case(&fill))
            })
            .count();
        // 100 bars and the legend's swatch.
        assert_eq!(bars, 101, "bars of series {i} ({fill})");
    }
    assert_eq!(
        fig.select(&sel("table.data tbody tr")).count(),
        3 * 100 + 2,
        "a row per thread and quantity, and the two aggregates"
    );
    // The PNG named after the paper's figures draws the bars too: each series' colour is there.
    let colours = colour_counts(&out.join("figures/fig08-threads-one-core.png"));
    for i in 0..3 {
        let c = macbench::report::plots::color(i);
        let pixels = colours.get(&[c.0, c.1, c.2]).copied().unwrap_or(0);
        assert!(pixels > 1000, "{pixels} pixels of series {i}");
    }
}
