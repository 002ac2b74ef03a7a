//! One trial: a receiver and a sender thread, one security association, one offered rate, counts.
//!
//! Each trial gets its own SPI and key (derived from the seed and the trial number), its own sockets on
//! ephemeral ports, and its own pair of threads pinned to their cores. A late packet of an earlier trial
//! therefore cannot be counted in a later one: it would carry another SPI.

use super::netns::NetnsPair;
use super::receiver::{receive_loop, ReceiveReport, Receiver, StopRule};
use super::search::TrialOutcome;
use super::sender::{send_loop, PacketBuilder, SendPlan, SendReport};
use super::wire::Sa;
use super::NetError;
use crate::mac::{Function, KeyParams};
use crate::system::{affinity, clock};
use serde::Serialize;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Everything a trial needs except the rate.
#[derive(Clone)]
pub struct TrialSetup {
    pub function: Function,
    /// Tag bytes carried in each packet (≤ the function's tag length; any length for `null`).
    pub tag_len: usize,
    /// Packet sizes cycled through (UDP payload bytes).
    pub sizes: Arc<Vec<u32>>,
    pub pool: Arc<Vec<u8>>,
    pub replay_window: u64,
    pub inject_bad_per_1000: u32,
    pub duration: Duration,
    pub seed: u64,
    /// Receive buffer to ask for (bytes); `None`: the system default.
    pub rcvbuf: Option<usize>,
    /// Datagrams per system call on both sides (`--batch`; 1: one call per datagram).
    pub batch: usize,
    /// UDP GSO on the sender (`--gso`), UDP GRO on the receiver (`--gro`).
    pub gso: bool,
    pub gro: bool,
    /// Packets per second an unthrottled trial prepares for: the most the sender is expected to
    /// manage. Its tags are computed before the trial starts ([`super::sender::prepare`]), so this
    /// sets how many; a sender that is faster sends them all in less than the trial's duration, and
    /// its rate is over the time that took.
    pub unthrottled_pps: f64,
}

/// What an unthrottled trial prepares for when nothing is known yet about the sender (the first
/// trial at a size): more than the development VM's loopback sender reached with GSO at 64 bytes on
/// most runs. [`super::bench`] sizes later trials from the null baseline's unthrottled rate.
pub const DEFAULT_UNTHROTTLED_PPS: f64 = 4e6;

impl TrialSetup {
    /// The tag length the function computes before truncation. The null function "computes" as many
    /// bytes as the packet carries, so its packets have the same layout as the MACs it is compared with;
    /// KMAC computes exactly what the packet carries (its output length L is an input).
    pub fn full_tag_len(&self) -> usize {
        self.function.algorithm.computed_tag_len(self.tag_len)
    }

    /// Key parameters for this trial's tags (KMAC's L is the packet's tag length).
    pub fn key_params(&self) -> KeyParams<'static> {
        KeyParams::default().for_tag_len(self.function.algorithm, self.tag_len)
    }

    pub fn nonce_len(&self) -> usize {
        self.function.algorithm.nonce_len.unwrap_or(0)
    }

    /// SPI and key of trial number `n`: both ends derive the same from the seed.
    pub fn association(&self, n: u32) -> (Sa, Vec<u8>) {
        use rand::{RngCore, SeedableRng};
        let mut rng =
            rand_chacha::ChaCha8Rng::seed_from_u64(self.seed ^ (u64::from(n) << 32) ^ 0x6b65_7973);
        let mut key = vec![0u8; self.function.algorithm.default_key_len];
        rng.fill_bytes(&mut key);
        let sa = Sa {
            spi: 0x4d42_0000 | (n & 0xffff),
            tag_len: self.tag_len,
        };
        (sa, key)
    }

    /// The association of trial number `n`, its key, and the sender's packet builder for them.
    pub fn sender(&self, n: u32) -> Result<(Sa, Vec<u8>, PacketBuilder), NetError> {
        let (sa, key) = self.association(n);
        let builder = self.builder(sa, &key)?;
        Ok((sa, key, builder))
    }

    /// A sender-side packet builder for `sa` and `key`.
    pub fn builder(&self, sa: Sa, key: &[u8]) -> Result<PacketBuilder, NetError> {
        let mac = self.function.with_key(key, self.key_params())?;
        Ok(PacketBuilder::new(
            sa,
            mac,
            self.full_tag_len(),
            self.nonce_len(),
            self.pool.clone(),
        ))
    }

    /// What the sender of a trial at `rate` (None: unthrottled) sends, stopping early on `cancel`.
    pub fn send_plan<'a>(&'a self, rate: Option<f64>, cancel: &'a AtomicBool) -> SendPlan<'a> {
        SendPlan {
            rate,
            duration: self.duration,
            packets: super::sender::packets_for(rate, self.unthrottled_pps, self.duration),
            sizes: &self.sizes,
            inject_bad_per_1000: self.inject_bad_per_1000,
            replay_window: self.replay_window,
            batch: self.batch,
            gso: self.gso,
            cancel,
        }
    }
}

/// Both sides' reports of one trial.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TrialResult {
    pub send: SendReport,
    pub receive: ReceiveReport,
}

impl TrialResult {
    /// Genuine packets offered but not delivered.
    pub fn lost(&self) -> u64 {
        self.send.sent.saturating_sub(self.receive.counts.delivered)
    }

    /// Delivered payload rate in Mbit/s over the trial (UDP payload bytes: header+payload+tag).
    pub fn delivered_mbps(&self) -> f64 {
        if self.send.trial_ns == 0 {
            0.0
        } else {
            self.receive.counts.delivered_bytes as f64 * 8.0 * 1e3 / self.send.trial_ns as f64
        }
    }

    /// Delivered packets per second of the trial.
    pub fn delivered_pps(&self) -> f64 {
        if self.send.trial_ns == 0 {
            0.0
        } else {
            self.receive.counts.delivered as f64 * 1e9 / self.send.trial_ns as f64
        }
    }
}

impl TrialOutcome for TrialResult {
    fn loss_ratio(&self) -> f64 {
        if self.send.sent == 0 {
            1.0
        } else {
            self.lost() as f64 / self.send.sent as f64
        }
    }

    fn achieved_pps(&self) -> f64 {
        self.send.achieved_pps()
    }
}

/// Where the two threads run and how packets get from one to the other.
pub struct LocalPath {
    /// `None`: loopback in the current namespace.
    pub netns: Option<NetnsPair>,
    pub sender_core: Option<usize>,
    pub receiver_core: Option<usize>,
    pub cancel: Arc<AtomicBool>,
}

impl LocalPath {
    fn addresses(&self) -> (Ipv4Addr, Ipv4Addr) {
        match &self.netns {
            Some(pair) => (pair.sender_addr, pair.receiver_addr),
            None => (Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST),
        }
    }

    pub fn describe(&self) -> String {
        match &self.netns {
            Some(pair) => format!(
                "veth between network namespaces {} ({}) and {} ({})",
                pair.sender_ns, pair.sender_addr, pair.receiver_ns, pair.receiver_addr
            ),
            None => "loopback 127.0.0.1".to_string(),
        }
    }

    /// Put the calling thread on `core` and into `netns`.
    fn place(core: Option<usize>, netns: Option<&str>) -> Result<(), String> {
        if let Some(c) = core {
            affinity::bind_current_thread(&[c])?;
        }
        if let Some(ns) = netns {
            super::netns::enter(ns)?;
        }
        Ok(())
    }

    /// Run trial number `n` at `rate` (None: unthrottled).
    pub fn trial(
        &self,
        setup: &TrialSetup,
        rate: Option<f64>,
        n: u32,
    ) -> Result<TrialResult, NetError> {
        let (sa, key, mut builder) = setup.sender(n)?;
        let plan = setup.send_plan(rate, &self.cancel);
        // Before the receiver starts: its deadline counts from its start.
        super::sender::prepare(&mut builder, &plan)?;
        let mac_rx = setup
            .function
            .with_key(&key, setup.key_params())
            .map_err(NetError::from)?;
        let mut receiver = Receiver::new(sa, mac_rx, setup.nonce_len(), setup.replay_window);
        let (tx_addr, rx_addr) = self.addresses();
        let tx_ns = self.netns.as_ref().map(|p| p.sender_ns.clone());
        let rx_ns = self.netns.as_ref().map(|p| p.receiver_ns.clone());
        let rcvbuf = setup.rcvbuf;
        let (batch, gro, gso) = (setup.batch, setup.gro, setup.gso);
        let stop = AtomicBool::new(false);
        let deadline_ns = clock::wall_ns() + setup.duration.as_nanos() as u64 * 2 + 3_000_000_000;
        let (addr_tx, addr_rx) = std::sync::mpsc::channel::<Result<SocketAddr, String>>();
        std::thread::scope(|scope| {
            let stop = &stop;
            let rx_thread = scope.spawn(move || -> Result<ReceiveReport, String> {
                let socket = (|| {
                    Self::place(self.receiver_core, rx_ns.as_deref())?;
                    let s = UdpSocket::bind((rx_addr, 0))
                        .map_err(|e| format!("bind {rx_addr}:0: {e}"))?;
                    if let Some(bytes) = rcvbuf {
                        super::receiver::set_receive_buffer(&s, bytes)
                            .map_err(|e| format!("--rcvbuf {bytes}: {e}"))?;
                    }
                    let local = s.local_addr().map_err(|e| e.to_string())?;
                    Ok::<_, String>((s, local))
                })();
                let socket = match socket {
                    Ok((s, local)) => {
                        let _ = addr_tx.send(Ok(local));
                        s
                    }
                    Err(e) => {
                        let _ = addr_tx.send(Err(e.clone()));
                        return Err(e);
                    }
                };
                let rule = StopRule {
                    stop,
                    idle: Duration::from_millis(10),
                    deadline_ns,
                };
                receive_loop(&socket, &mut receiver, &rule, batch, gro)
                    .map_err(|e| format!("receive: {e}"))
            });
            let target = match addr_rx.recv_timeout(Duration::from_secs(10)) {
                Ok(Ok(a)) => a,
                Ok(Err(e)) => {
                    stop.store(true, Ordering::Release);
                    let _ = rx_thread.join();
                    return Err(NetError::Failure(format!("receiver set-up: {e}")));
                }
                Err(_) => {
                    stop.store(true, Ordering::Release);
                    let _ = rx_thread.join();
                    return Err(NetError::Failure(
                        "receiver thread did not start within 10 s".to_string(),
                    ));
                }
            };
            let plan = &plan;
            let builder = &mut builder;
            let tx_thread = scope.spawn(move || -> Result<SendReport, String> {
                Self::place(self.sender_core, tx_ns.as_deref())?;
                let s =
                    UdpSocket::bind((tx_addr, 0)).map_err(|e| format!("bind {tx_addr}:0: {e}"))?;
                s.connect(target)
                    .map_err(|e| format!("connect {target}: {e}"))?;
                if gso {
                    super::batch_io::enable_gso(&s)?;
                }
                send_loop(&s, builder, plan).map_err(|r| r.to_string())
            });
            let send = tx_thread.join();
            stop.store(true, Ordering::Release);
            let receive = rx_thread.join();
            let send = send
                .map_err(|_| NetError::Failure("sender thread panicked".to_string()))?
                .map_err(|e| NetError::Failure(format!("sender: {e}")))?;
            let receive = receive
                .map_err(|_| NetError::Failure("receiver thread panicked".to_string()))?
                .map_err(|e| NetError::Failure(format!("receiver: {e}")))?;
            Ok(TrialResult { send, receive })
        })
    }
}
