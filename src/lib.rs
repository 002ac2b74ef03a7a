//! macbench: benchmark Message Authentication Code functions under concurrent sessions.
//!
//! Data flows one way: CLI → scenario → engine → raw counters → metrics → exporters.
//! `mac` is the registry of functions (algorithm × backend × acceleration), `engine` runs sessions and
//! returns raw counters, `metrics` is pure arithmetic on them, `bench` runs sweeps with repeats and
//! validity checks, `report` exports, `traffic` holds packet-size models and the cost model.
//! `system` (CPU lists, affinity, clocks) sits below them all, and so do `stdio` and `table` (where
//! printed lines go, and the one renderer every table goes through); `isolate` runs software-only
//! (`sw`) functions in a child process, above the registry and the engine, which never call up into it.
//! `tests/architecture.rs` checks that modules import in one direction only.
//! See `docs/methodology.md` for what is measured and why.

pub mod bench;
pub mod cli;
pub mod compare;
pub mod energy;
pub mod engine;
pub mod host;
pub mod isolate;
pub mod mac;
pub mod metrics;
pub mod net;
pub mod number;
pub mod peers;
pub mod report;
pub mod reproduce;
pub mod results;
pub mod session;
pub mod spec;
pub mod stats;
pub mod stdio;
pub mod sweep;
pub mod system;
pub mod table;
pub mod traffic;
