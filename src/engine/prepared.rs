//! What a scenario's repeats share, found out once per process.
//!
//! A run's window is what it is for; everything before it is paid from the sweep's budget. The checks
//! against the machine, the pre-flight's tags at the timed lengths and the key-setup measurement give
//! the same answer for every repeat of a scenario, and together they took ~4 ms of each ~80 ms run of
//! the main job on the 2-core development VM (issue 44). So the first run of a scenario in this process
//! does them and says so (`raw[].preflight`), and a later run of the same scenario — the same function
//! and every setting but its timing (duration, window, tick, which `--auto` and the planner change) —
//! reuses them. A switched function (`sw`, a masked ISA level) runs in its acceleration's child, one
//! process kept for every run of that acceleration, so the child's first run of a scenario does them
//! and its later runs reuse them, as here.

use super::Scenario;
use std::collections::HashMap;
use std::sync::Mutex;

/// What a run starts from.
pub(super) struct Prepared {
    /// Mean CPU ns of one key setup.
    pub key_setup_ns: f64,
    /// The pre-flight this run did, `None` when an earlier run of the scenario did it.
    pub preflight: Option<super::preflight::Preflight>,
    /// Whether this is the scenario's first run in this process (it also reads the core clock).
    pub first: bool,
}

static KNOWN: Mutex<Option<HashMap<String, f64>>> = Mutex::new(None);

/// The scenario with its timing left out: what its repeats have in common.
fn key(s: &Scenario) -> String {
    let mut spec = s.spec.clone();
    spec.duration = std::time::Duration::ZERO;
    spec.window_start = std::time::Duration::ZERO;
    spec.window_end = std::time::Duration::ZERO;
    spec.tick = std::time::Duration::ZERO;
    let spec = serde_json::to_string(&spec).unwrap_or_default();
    format!("{}|{spec}", s.function.id())
}

/// A scenario validated, pre-flighted and key-timed earlier in this process.
pub(super) fn recall(s: &Scenario) -> Option<Prepared> {
    let known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    let key_setup_ns = *known.as_ref()?.get(&key(s))?;
    Some(Prepared {
        key_setup_ns,
        preflight: None,
        first: false,
    })
}

/// Remember that `s` passed its checks and what one key setup cost.
pub(super) fn remember(s: &Scenario, key_setup_ns: f64) {
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    known
        .get_or_insert_with(HashMap::new)
        .insert(key(s), key_setup_ns);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ScenarioSpec;

    fn scenario(size: u32, duration_ms: u64) -> Scenario {
        Scenario {
            function: crate::mac::null::function(),
            spec: ScenarioSpec {
                size: crate::engine::SizeSource::Fixed { size },
                duration: std::time::Duration::from_millis(duration_ms),
                window_end: std::time::Duration::from_millis(duration_ms),
                ..ScenarioSpec::default()
            },
        }
    }

    #[test]
    fn a_scenario_is_known_again_whatever_its_timing_but_not_another_size() {
        // Sizes no other test uses, so the process-wide table holds nothing of theirs.
        let a = scenario(40_001, 20);
        assert!(recall(&a).is_none());
        remember(&a, 123.0);
        let longer = scenario(40_001, 80);
        let known = recall(&longer).expect("the same scenario, longer");
        assert_eq!(known.key_setup_ns, 123.0);
        assert!(known.preflight.is_none() && !known.first);
        assert!(recall(&scenario(40_002, 20)).is_none());
    }
}
