//! Functions × sizes: for each size the `null` baseline first, then every function, each either searched
//! (RFC 2544) or run once at a fixed rate. Results are handed out one by one so the caller can print
//! and rewrite its files after each (a late crash loses nothing finished).

use super::control::RemotePath;
use super::report::{
    LimitedBy, NetConfigReport, NetResult, TrialSummary, SENDER_PREPARES, SIZE_DEFINITION,
};
use super::search::{search, Limit, SearchConfig, TrialOutcome, TrialReply};
use super::trial::{LocalPath, TrialResult, TrialSetup};
use super::NetError;
// Defined with the sender, which draws packet sizes from it; `report` names it too, and importing it
// from here would make `report` and `bench` import each other.
pub use super::sender::SizeSpec;
use crate::mac::Function;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// How packets travel.
pub enum Path {
    Local(LocalPath),
    Remote(RemotePath),
}

impl Path {
    pub fn describe(&self) -> String {
        match self {
            Path::Local(p) => p.describe(),
            Path::Remote(p) => p.describe(),
        }
    }

    fn cancelled(&self) -> bool {
        match self {
            Path::Local(p) => p.cancel.load(Ordering::Relaxed),
            Path::Remote(p) => p.cancel.load(Ordering::Relaxed),
        }
    }

    fn trial(
        &mut self,
        setup: &TrialSetup,
        rate: Option<f64>,
        n: u32,
    ) -> Result<TrialResult, NetError> {
        match self {
            Path::Local(p) => p.trial(setup, rate, n),
            Path::Remote(p) => p.trial(setup, rate, n),
        }
    }
}

/// Search for the zero-loss rate, or measure one trial at a given rate.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    Search(SearchConfig),
    FixedRate { pps: f64, acceptable_loss: f64 },
}

pub struct NetConfig {
    pub functions: Vec<Function>,
    /// The null function, run first at each size as the baseline; `None` to skip.
    pub null: Option<Function>,
    pub sizes: Vec<SizeSpec>,
    /// Tag bytes per packet for each function (see [`tag_len_for`]).
    pub tag_len: usize,
    pub mode: Mode,
    pub trial: Duration,
    pub replay_window: u64,
    pub inject_bad_per_1000: u32,
    pub seed: u64,
    pub rcvbuf: Option<usize>,
    /// Datagrams per system call on both sides.
    pub batch: usize,
    /// UDP GSO on the sender, UDP GRO on the receiver.
    pub gso: bool,
    pub gro: bool,
}

/// Everything a `net` run was asked for, validated before anything runs: the trials' configuration,
/// the search, the cores and which UDP offloads are on.
pub struct NetPlan {
    pub config: NetConfig,
    pub search: SearchConfig,
    pub sender_core: Option<usize>,
    pub receiver_core: Option<usize>,
    /// Which UDP offloads are on, and why the others are off.
    pub offloads: String,
    /// Seconds the slowest function takes to prepare the tags of the largest trial, before that
    /// trial's clock starts (`sender::tag_ns` × its packets); 0 when unknown.
    pub preparation_s: f64,
}

impl NetPlan {
    /// How many results the run gives: each size for each function and the null baseline.
    pub fn results(&self) -> usize {
        self.config.sizes.len()
            * (self.config.functions.len() + usize::from(self.config.null.is_some()))
    }

    /// The most trials one result takes: the search's halvings to its resolution, or one at a
    /// fixed rate.
    pub fn trials(&self) -> usize {
        match self.config.mode {
            Mode::Search(_) => {
                let halvings = (1.0 / self.search.resolution).log2().ceil().max(0.0) as usize;
                (1 + halvings).min(self.search.max_trials)
            }
            Mode::FixedRate { .. } => 1,
        }
    }

    /// The run-wide facts written with the results.
    pub fn config_report(&self, path: &Path) -> NetConfigReport {
        let receiver_core = match path {
            Path::Local(_) => self.receiver_core,
            Path::Remote(_) => None,
        };
        NetConfigReport {
            transport: path.describe(),
            mode: match self.config.mode {
                Mode::Search(_) => "search".to_string(),
                Mode::FixedRate { pps, .. } => format!("fixed-rate {pps} pps"),
            },
            trial_s: self.config.trial.as_secs_f64(),
            acceptable_loss: self.search.acceptable_loss,
            resolution: self.search.resolution,
            replay_window: self.config.replay_window,
            inject_bad_per_1000: self.config.inject_bad_per_1000,
            rcvbuf: self.config.rcvbuf,
            batch: self.config.batch,
            gso: self.config.gso,
            gro: self.config.gro,
            offloads: self.offloads.clone(),
            sender_prepares: SENDER_PREPARES,
            requested_tag_len: self.config.tag_len,
            sender_core: self.sender_core,
            receiver_core,
            seed: self.config.seed,
            size_definition: SIZE_DEFINITION,
        }
    }
}

/// The sender's and the receiver's cores: each as asked; else, with two online CPUs or more, the
/// first online CPU for the sender and another for the receiver; with one, wherever the scheduler
/// puts them (`None`).
pub fn choose_cores(
    sender: Option<usize>,
    receiver: Option<usize>,
    online: &[usize],
) -> (Option<usize>, Option<usize>) {
    let two = online.len() >= 2;
    let sender = sender.or(two.then(|| online[0]));
    let receiver = receiver.or(two.then(|| {
        *online
            .iter()
            .find(|&&c| Some(c) != sender)
            .unwrap_or(&online[1])
    }));
    (sender, receiver)
}

/// The null baseline of a run (run first at each size), unless it is switched off: taken out of
/// `functions`, where `--alg null` would otherwise measure it twice.
pub fn null_baseline(functions: &mut Vec<Function>, wanted: bool) -> Option<Function> {
    if !wanted {
        return None;
    }
    let null = crate::mac::null::function();
    functions.retain(|f| !std::ptr::eq(f.algorithm, null.algorithm));
    Some(null)
}

/// Tag bytes `function` carries when `requested` are asked for: the algorithm's own tag if shorter
/// (the null function carries whatever is asked, to share the MACs' packet layout).
pub fn tag_len_for(function: &Function, requested: usize) -> usize {
    requested.min(function.algorithm.max_tag_len())
}

/// Run everything; `on_result` gets each finished result (and may stop the run by returning an error).
pub fn run(
    config: &NetConfig,
    path: &mut Path,
    mut on_result: impl FnMut(&NetResult) -> Result<(), NetError>,
) -> Result<Vec<NetResult>, NetError> {
    let pool = Arc::new(super::sender::payload_pool(config.seed));
    let mut results: Vec<NetResult> = Vec::new();
    let mut trial_no: u32 = 0;
    for size in &config.sizes {
        let mut null_pps: Option<f64> = None;
        // The sender's path is the same for every function (tags are prepared ahead), so the
        // baseline's unthrottled rate says how many packets the next unthrottled trials need.
        let mut unthrottled_pps = super::trial::DEFAULT_UNTHROTTLED_PPS;
        let functions = config.null.iter().chain(config.functions.iter());
        for (i, function) in functions.enumerate() {
            if path.cancelled() {
                return Ok(results);
            }
            let is_baseline = config.null.is_some() && i == 0;
            let setup = TrialSetup {
                function: *function,
                tag_len: tag_len_for(function, config.tag_len),
                sizes: size.sequence.clone(),
                pool: pool.clone(),
                replay_window: config.replay_window,
                inject_bad_per_1000: config.inject_bad_per_1000,
                duration: config.trial,
                seed: config.seed,
                rcvbuf: config.rcvbuf,
                batch: config.batch,
                gso: config.gso,
                gro: config.gro,
                unthrottled_pps,
            };
            let mut result = measure(path, &setup, &config.mode, size, &mut trial_no)?;
            if is_baseline || config.null.is_none() {
                if let Some(max) = result.max_rate_pps.filter(|m| *m > 0.0) {
                    unthrottled_pps = UNTHROTTLED_HEADROOM * max;
                }
            }
            if is_baseline {
                result.baseline = true;
                null_pps = result.throughput.as_ref().map(|t| t.achieved_pps);
            }
            if let (Some(n), Some(t)) = (null_pps, result.throughput.as_ref()) {
                if n > 0.0 {
                    result.pps_vs_null = Some(t.achieved_pps / n);
                }
            }
            on_result(&result)?;
            results.push(result);
        }
    }
    Ok(results)
}

/// One function at one size.
pub fn measure(
    path: &mut Path,
    setup: &TrialSetup,
    mode: &Mode,
    size: &SizeSpec,
    trial_no: &mut u32,
) -> Result<NetResult, NetError> {
    let mut result = NetResult::new(&setup.function, size, setup.tag_len);
    match *mode {
        Mode::FixedRate {
            pps,
            acceptable_loss,
        } => {
            *trial_no += 1;
            let t = path.trial(setup, Some(pps), *trial_no)?;
            let pass = t.loss_ratio() <= acceptable_loss;
            let summary = TrialSummary::new(&t, pass);
            result.limited_by = if !pass {
                LimitedBy::Receiver
            } else if summary.achieved_pps < SHORTFALL * pps {
                LimitedBy::Sender
            } else {
                LimitedBy::Neither
            };
            result.mode = "fixed-rate";
            result.trials.push(summary.clone());
            result.throughput = Some(summary);
        }
        Mode::Search(config) => {
            let outcome = search(&config, |rate| {
                if path.cancelled() {
                    return TrialReply::Cancelled;
                }
                *trial_no += 1;
                match path.trial(setup, rate, *trial_no) {
                    Ok(t) => TrialReply::Done(t),
                    Err(e) => TrialReply::Failed(e),
                }
            })?;
            result.mode = "search";
            result.max_rate_pps = Some(outcome.max_rate_pps);
            result.limit = Some(outcome.limit);
            result.trials = outcome
                .steps
                .iter()
                .map(|s| {
                    let mut t = TrialSummary::new(&s.outcome, s.pass);
                    t.target_pps = s.target_pps;
                    t
                })
                .collect();
            result.throughput = outcome.best.map(|i| result.trials[i].clone());
            result.limited_by = match outcome.limit {
                Limit::SenderLimited => LimitedBy::Sender,
                Limit::Resolution | Limit::TrialBound if outcome.best.is_some() => {
                    LimitedBy::Receiver
                }
                _ => LimitedBy::Unknown,
            };
            if result.limited_by == LimitedBy::Receiver {
                result.zero_loss_pps = result.throughput.as_ref().map(|t| t.achieved_pps);
            }
            let offloads = setup.gso && setup.gro;
            if let Some(w) = limit_warning(outcome.limit, result.throughput.as_ref(), offloads) {
                result.warnings.push(w);
            }
        }
    }
    result
        .warnings
        .extend(rate_warnings(result.throughput.as_ref()));
    Ok(result)
}

/// An unthrottled trial prepares for this many times the baseline's unthrottled rate: a sender
/// that runs faster than that ends its trial early, with its rate over the time it took.
const UNTHROTTLED_HEADROOM: f64 = 1.25;

/// A sender that achieves less than this share of the rate asked for is said to fall short.
const SHORTFALL: f64 = 0.97;
/// Fewer packets than this in a trial make its rate a coarse number (one packet more or less moves
/// it by over 1 %).
pub const FEW_PACKETS: u64 = 100;

/// The warning that says why a search stopped where it did; `None` when it reached its resolution.
/// `offloads`: GSO and GRO were both on (else a sender-limited result suggests them).
fn limit_warning(limit: Limit, best: Option<&TrialSummary>, offloads: bool) -> Option<String> {
    let ns = |v: Option<f64>| v.map_or_else(|| "?".to_string(), |x| format!("{x:.0}"));
    Some(match limit {
        Limit::SenderLimited => format!(
            "sender-limited: even the unthrottled trial met the acceptable loss, so the receiver was \
             never pushed to its limit and this rate is a lower bound, not the zero-loss rate of the \
             MAC (CPU per packet: sender {} ns, receiver {} ns){}",
            ns(best.and_then(|t| t.sender_cpu_ns_per_packet)),
            ns(best.and_then(|t| t.receiver_cpu_ns_per_packet)),
            if offloads {
                ""
            } else {
                "; UDP GSO and GRO (on by default when the kernel takes them) make the sender cheaper"
            },
        ),
        Limit::NothingPassed => {
            "no offered rate down to the resolution met the acceptable loss".to_string()
        }
        Limit::TrialBound => {
            "search stopped at its trial bound before reaching the resolution".to_string()
        }
        Limit::Cancelled => "cancelled".to_string(),
        Limit::Resolution => return None,
    })
}

/// Warnings about the reported trial's rate: the sender fell short of the rate asked for, or sent
/// too few packets for a rate to mean much.
fn rate_warnings(t: Option<&TrialSummary>) -> Vec<String> {
    let Some(t) = t else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    if let Some(target) = t.target_pps {
        if t.achieved_pps < SHORTFALL * target {
            warnings.push(format!(
                "the sender achieved {:.0} pps of the {:.0} pps asked for",
                t.achieved_pps, target
            ));
        }
    }
    if t.sent < FEW_PACKETS {
        warnings.push(format!(
            "only {} packet(s) sent: a rate from so few is coarse; give a longer --duration or a higher --rate",
            t.sent
        ));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cores_are_as_asked_else_two_different_online_ones_else_the_schedulers() {
        assert_eq!(choose_cores(None, None, &[2, 5, 7]), (Some(2), Some(5)));
        assert_eq!(choose_cores(Some(2), None, &[2, 5]), (Some(2), Some(5)));
        assert_eq!(choose_cores(Some(5), None, &[2, 5]), (Some(5), Some(2)));
        assert_eq!(choose_cores(None, Some(7), &[2, 5, 7]), (Some(2), Some(7)));
        assert_eq!(choose_cores(None, None, &[4]), (None, None));
        assert_eq!(choose_cores(Some(4), None, &[4]), (Some(4), None));
    }

    #[test]
    fn the_null_baseline_leaves_the_functions_unless_switched_off() {
        let null = crate::mac::null::function();
        let mut functions = vec![null];
        assert!(null_baseline(&mut functions, false).is_none());
        assert_eq!(
            functions.len(),
            1,
            "--no-null measures an asked-for null as a function"
        );
        let baseline = null_baseline(&mut functions, true).map(|f| f.id());
        assert_eq!(baseline.as_deref(), Some("null/null/hw"));
        assert!(functions.is_empty(), "the baseline is not measured twice");
    }
}
