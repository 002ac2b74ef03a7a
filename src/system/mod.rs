//! What macbench asks of the operating system and the CPU: which CPUs are online and how CPU lists are
//! written ([`cpus`]), what kind of core each is ([`topology`]), binding threads to them ([`affinity`]),
//! the clocks ([`clock`]), what could disturb a run ([`conditions`]), children that must end with
//! macbench ([`lifetime`]), opening inputs without waiting forever on a FIFO ([`input`]), and every other
//! call into the kernel, each a safe function ([`kernel`]).
//!
//! Why a module of its own: these are services that several layers need — the engine pins sessions and
//! reads clocks, `net` pins its sender and receiver, the CLI parses `--cores`, host facts list the
//! online CPUs, the software-only child checks a scenario before it starts one. Kept here, below all of
//! them, none has to import another layer to get them (STYLE §11). Nothing here knows of MACs, scenarios
//! or results; it imports no other macbench module. The old paths (`engine::clock`, `engine::affinity`,
//! `engine::format_cpu_list`, `host::online_cpus`, `host::parse_cpu_list`) are re-exports of these.

pub mod affinity;
pub mod clock;
pub mod conditions;
pub mod cpus;
pub mod input;
pub mod kernel;
pub mod lifetime;
pub mod topology;

pub use cpus::{format_cpu_list, online_cpus, parse_cpu_list, MAX_CPU};
