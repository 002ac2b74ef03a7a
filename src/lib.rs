//! macbench: benchmark Message Authentication Code functions under concurrent sessions.
//!
//! Data flows one way: CLI → scenario → engine → raw counters → metrics → exporters.
//! `mac` is the registry of functions (algorithm × backend × acceleration), `traffic` the packet-size
//! models and cost model; see `../shared/METHODOLOGY.md` for what is measured and why.

pub mod cli;
pub mod host;
pub mod mac;
pub mod traffic;
