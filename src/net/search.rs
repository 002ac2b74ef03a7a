//! RFC 2544 §26.1 throughput: the highest offered rate at which loss over a trial stays within the
//! acceptable loss, found by binary search.
//!
//! Pure logic over a trial function, so it is tested on synthetic loss curves without any socket.
//! The search first runs one unthrottled trial: its achieved rate is the most the sender can offer
//! (`max_rate`), the upper end of the search. If even that trial passes, the sender is the
//! bottleneck and its rate is the result (flagged, since the receiver was never pushed to loss).
//! Otherwise the interval `[0, max_rate]` is halved until it is narrower than `resolution × max_rate`;
//! the result is the highest rate that passed, with that trial's measurements.

use serde::Serialize;

/// What the search needs to know about a trial.
pub trait TrialOutcome {
    /// Lost / offered, in `0..=1`.
    fn loss_ratio(&self) -> f64;
    /// Offered rate the sender achieved (packets/s).
    fn achieved_pps(&self) -> f64;
}

#[derive(Debug, Clone, Copy)]
pub struct SearchConfig {
    /// Acceptable loss ratio (0 for zero loss; 1e-5 for "0.001 %").
    pub acceptable_loss: f64,
    /// Stop when the interval is narrower than this fraction of the maximum rate.
    pub resolution: f64,
    /// Hard bound on trials, unthrottled one included.
    pub max_trials: usize,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            acceptable_loss: 0.0,
            resolution: 0.01,
            max_trials: 32,
        }
    }
}

/// One trial of the search.
#[derive(Debug, Clone, Serialize)]
pub struct Step<T> {
    /// Rate asked for; `None` for the unthrottled trial.
    pub target_pps: Option<f64>,
    pub pass: bool,
    pub outcome: T,
}

/// Why the search stopped where it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// Interval narrower than the resolution.
    Resolution,
    /// The unthrottled trial passed: the sender, not the receiver, limits the rate.
    SenderLimited,
    /// No trial passed down to the resolution.
    NothingPassed,
    /// `max_trials` reached.
    TrialBound,
    /// The trial function asked to stop (cancelled).
    Cancelled,
}

#[derive(Debug, Clone, Serialize)]
pub struct SearchResult<T> {
    /// Achieved rate of the unthrottled trial.
    pub max_rate_pps: f64,
    /// Index into `steps` of the highest passing trial.
    pub best: Option<usize>,
    pub limit: Limit,
    pub steps: Vec<Step<T>>,
}

impl<T> SearchResult<T> {
    pub fn best_step(&self) -> Option<&Step<T>> {
        self.best.and_then(|i| self.steps.get(i))
    }
}

/// What a trial function returns: an outcome, or a request to stop searching.
pub enum TrialReply<T, E> {
    Done(T),
    Cancelled,
    Failed(E),
}

/// Run the search. `trial(None)` runs an unthrottled trial, `trial(Some(pps))` a paced one.
pub fn search<T: TrialOutcome, E>(
    config: &SearchConfig,
    mut trial: impl FnMut(Option<f64>) -> TrialReply<T, E>,
) -> Result<SearchResult<T>, E> {
    let mut result = SearchResult {
        max_rate_pps: 0.0,
        best: None,
        limit: Limit::Resolution,
        steps: Vec::new(),
    };
    let passes = |o: &T| o.loss_ratio() <= config.acceptable_loss;
    let first = match trial(None) {
        TrialReply::Done(o) => o,
        TrialReply::Cancelled => {
            result.limit = Limit::Cancelled;
            return Ok(result);
        }
        TrialReply::Failed(e) => return Err(e),
    };
    let max = first.achieved_pps();
    result.max_rate_pps = max;
    let pass = passes(&first);
    result.steps.push(Step {
        target_pps: None,
        pass,
        outcome: first,
    });
    if pass {
        result.best = Some(0);
        result.limit = Limit::SenderLimited;
        return Ok(result);
    }
    if !(max.is_finite() && max > 0.0) {
        result.limit = Limit::NothingPassed;
        return Ok(result);
    }
    let resolution = config.resolution.clamp(1e-6, 1.0) * max;
    let (mut lo, mut hi) = (0.0f64, max);
    while hi - lo > resolution {
        if result.steps.len() >= config.max_trials.max(1) {
            result.limit = Limit::TrialBound;
            return Ok(result);
        }
        let mid = (lo + hi) / 2.0;
        let outcome = match trial(Some(mid)) {
            TrialReply::Done(o) => o,
            TrialReply::Cancelled => {
                result.limit = Limit::Cancelled;
                return Ok(result);
            }
            TrialReply::Failed(e) => return Err(e),
        };
        let pass = passes(&outcome);
        if pass {
            lo = mid;
            result.best = Some(result.steps.len());
        } else {
            hi = mid;
        }
        result.steps.push(Step {
            target_pps: Some(mid),
            pass,
            outcome,
        });
    }
    if result.best.is_none() {
        result.limit = Limit::NothingPassed;
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic device: the sender manages at most `sender_max` pps; the receiver forwards up to
    /// `capacity` pps without loss and loses the excess.
    struct Synthetic {
        sender_max: f64,
        capacity: f64,
        /// Loss below capacity (e.g. a constant background error rate).
        floor: f64,
    }

    #[derive(Debug, Clone, Copy)]
    struct Outcome {
        achieved: f64,
        loss: f64,
    }

    impl TrialOutcome for Outcome {
        fn loss_ratio(&self) -> f64 {
            self.loss
        }
        fn achieved_pps(&self) -> f64 {
            self.achieved
        }
    }

    impl Synthetic {
        /// A device that loses only the excess over its capacity.
        fn without_background_loss(sender_max: f64, capacity: f64) -> Synthetic {
            Synthetic::new(sender_max, capacity, 0.0)
        }

        fn new(sender_max: f64, capacity: f64, floor: f64) -> Synthetic {
            Synthetic {
                sender_max,
                capacity,
                floor,
            }
        }

        fn trial(&self, rate: Option<f64>) -> TrialReply<Outcome, ()> {
            let achieved = rate.unwrap_or(f64::INFINITY).min(self.sender_max);
            let excess = ((achieved - self.capacity) / achieved).max(0.0);
            TrialReply::Done(Outcome {
                achieved,
                loss: (excess + self.floor).min(1.0),
            })
        }
    }

    fn run(device: &Synthetic, config: &SearchConfig) -> SearchResult<Outcome> {
        search(config, |r| device.trial(r)).unwrap()
    }

    /// [`run`] with the default configuration as `change` leaves it.
    fn run_with(
        device: &Synthetic,
        change: impl FnOnce(&mut SearchConfig),
    ) -> SearchResult<Outcome> {
        let mut config = SearchConfig::default();
        change(&mut config);
        run(device, &config)
    }

    #[test]
    fn finds_the_knee_within_the_resolution() {
        for capacity in [10_000.0, 123_456.0, 799_999.0] {
            let device = Synthetic::without_background_loss(800_000.0, capacity);
            let config = SearchConfig::default();
            let r = run(&device, &config);
            let best = r.best_step().unwrap();
            let found = best.target_pps.unwrap();
            assert!(found <= capacity, "{found} > {capacity}");
            assert!(
                capacity - found <= 0.01 * 800_000.0,
                "{found} vs {capacity}"
            );
            assert_eq!(best.outcome.loss, 0.0);
            assert_eq!(r.limit, Limit::Resolution);
            assert_eq!(r.max_rate_pps, 800_000.0);
            // log2(100) rounds up to 7 halvings, plus the unthrottled trial.
            assert_eq!(r.steps.len(), 8);
            assert!(r.steps.iter().all(|s| s.pass == (s.outcome.loss == 0.0)));
        }
        // A knee below the resolution (1 % of 800k) is not found: reported as such, not as a rate.
        let tiny = Synthetic::without_background_loss(800_000.0, 1_000.0);
        let r = run(&tiny, &SearchConfig::default());
        assert_eq!(r.limit, Limit::NothingPassed);
        assert!(r.best.is_none());
    }

    #[test]
    fn acceptable_loss_moves_the_result_up() {
        // Loss rises slowly past the knee: accepting 5 % loss allows a little more rate.
        let device = Synthetic::without_background_loss(1_000_000.0, 500_000.0);
        let strict = run(&device, &SearchConfig::default());
        let lenient = run_with(&device, |c| {
            c.acceptable_loss = 0.05;
            c.resolution = 0.001;
        });
        let s = strict.best_step().unwrap().target_pps.unwrap();
        let l = lenient.best_step().unwrap().target_pps.unwrap();
        // 5 % loss at rate r: (r - 500k)/r = 0.05 → r = 526,316.
        assert!(l > s);
        assert!((l - 526_316.0).abs() <= 1_000.0, "{l}");
    }

    #[test]
    fn sender_limited_and_nothing_passes() {
        let device = Synthetic::without_background_loss(50_000.0, 100_000.0);
        let r = run(&device, &SearchConfig::default());
        assert_eq!(r.limit, Limit::SenderLimited);
        assert_eq!(r.steps.len(), 1);
        assert_eq!(r.best_step().unwrap().outcome.achieved, 50_000.0);

        let lossy = Synthetic::new(50_000.0, 100_000.0, 0.001);
        let r = run(&lossy, &SearchConfig::default());
        assert_eq!(r.limit, Limit::NothingPassed);
        assert!(r.best.is_none());
        // The same device passes when its background loss is acceptable.
        let r = run_with(&lossy, |c| c.acceptable_loss = 0.001);
        assert_eq!(r.limit, Limit::SenderLimited);
    }

    #[test]
    fn trial_bound_and_cancel_stop_the_search() {
        let device = Synthetic::without_background_loss(1e6, 3e5);
        let r = run_with(&device, |c| c.max_trials = 3);
        assert_eq!(r.limit, Limit::TrialBound);
        assert_eq!(r.steps.len(), 3);
        let mut calls = 0;
        let r = search(&SearchConfig::default(), |rate| {
            calls += 1;
            if calls > 2 {
                TrialReply::Cancelled
            } else {
                device.trial(rate)
            }
        })
        .unwrap();
        assert_eq!(r.limit, Limit::Cancelled);
        assert_eq!(r.steps.len(), 2);
        let e = search(&SearchConfig::default(), |_| {
            TrialReply::<Outcome, &str>::Failed("socket")
        });
        assert_eq!(e.err(), Some("socket"));
    }

    #[test]
    fn a_dead_sender_is_not_a_result() {
        let device = Synthetic::new(0.0, 1.0, 1.0);
        let r = run(&device, &SearchConfig::default());
        assert_eq!(r.limit, Limit::NothingPassed);
    }
}
