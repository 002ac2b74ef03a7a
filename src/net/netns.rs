//! `--netns`: two network namespaces joined by a veth pair, created by macbench and removed on exit.
//!
//! Packets then cross a real (virtual) link with its own qdisc and a namespace boundary instead of the
//! loopback shortcut, which is closer to what a host with two NICs does, without sending anything
//! outside the machine. The namespaces are made with iproute2 (`ip netns add`, which also mounts them
//! under /var/run/netns, so a crashed run can be cleaned up by hand: `ip netns del macbench-…`).
//! Threads enter them with `setns(2)`, which for network namespaces works per thread.

use super::NetError;
use std::net::Ipv4Addr;
use std::process::Command;

/// TEST-NET-1 addresses (RFC 5737): they exist only inside the two private namespaces.
const SENDER_ADDR: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
const RECEIVER_ADDR: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 2);

/// Two namespaces and the veth pair between them; dropping it deletes them.
#[derive(Debug)]
pub struct NetnsPair {
    pub sender_ns: String,
    pub receiver_ns: String,
    pub sender_addr: Ipv4Addr,
    pub receiver_addr: Ipv4Addr,
    sender_link: String,
    created: Vec<String>,
}

/// Check that namespaces can be made here: root and iproute2. The error is one line naming the fix.
pub fn check_available() -> Result<(), NetError> {
    if !crate::system::kernel::is_root() {
        return Err(NetError::Usage(
            "--netns needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN to create network namespaces); \
             run as root or drop --netns to use loopback"
                .to_string(),
        ));
    }
    match Command::new("ip").arg("-V").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err(NetError::Usage(
            "--netns needs iproute2's `ip` command on PATH (apt-get install iproute2); \
             or drop --netns to use loopback"
                .to_string(),
        )),
    }
}

fn ip(args: &[&str]) -> Result<(), NetError> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| NetError::Failure(format!("--netns: cannot run ip: {e}")))?;
    if out.status.success() {
        Ok(())
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        Err(NetError::Failure(format!(
            "--netns: `ip {}` failed: {}",
            args.join(" "),
            stderr.trim().lines().next().unwrap_or("no message")
        )))
    }
}

impl NetnsPair {
    /// Create `macbench-PID-tx` and `macbench-PID-rx`, a veth pair between them, addresses, links up.
    pub fn create() -> Result<NetnsPair, NetError> {
        check_available()?;
        let pid = std::process::id();
        let mut pair = NetnsPair {
            sender_ns: format!("macbench-{pid}-tx"),
            receiver_ns: format!("macbench-{pid}-rx"),
            sender_addr: SENDER_ADDR,
            receiver_addr: RECEIVER_ADDR,
            // Interface names are at most 15 bytes: "mbtx" + a pid of up to 7 digits.
            sender_link: format!("mbtx{pid}"),
            created: Vec::new(),
        };
        let receiver_link = format!("mbrx{pid}");
        let (tx, rx) = (pair.sender_ns.clone(), pair.receiver_ns.clone());
        ip(&["netns", "add", &tx])?;
        pair.created.push(tx.clone());
        ip(&["netns", "add", &rx])?;
        pair.created.push(rx.clone());
        let tx_link = pair.sender_link.clone();
        ip(&[
            "link",
            "add",
            &tx_link,
            "type",
            "veth",
            "peer",
            "name",
            &receiver_link,
        ])?;
        ip(&["link", "set", &tx_link, "netns", &tx])?;
        ip(&["link", "set", &receiver_link, "netns", &rx])?;
        let tx_cidr = format!("{SENDER_ADDR}/30");
        let rx_cidr = format!("{RECEIVER_ADDR}/30");
        ip(&["-n", &tx, "addr", "add", &tx_cidr, "dev", &tx_link])?;
        ip(&["-n", &rx, "addr", "add", &rx_cidr, "dev", &receiver_link])?;
        ip(&["-n", &tx, "link", "set", &tx_link, "up"])?;
        ip(&["-n", &rx, "link", "set", &receiver_link, "up"])?;
        ip(&["-n", &tx, "link", "set", "lo", "up"])?;
        ip(&["-n", &rx, "link", "set", "lo", "up"])?;
        Ok(pair)
    }
}

impl Drop for NetnsPair {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth end inside it, and with it the peer. A veth that never
        // made it into a namespace is deleted by name. Errors are ignored: nothing more can be done.
        for ns in self.created.drain(..) {
            let _ = Command::new("ip").args(["netns", "del", &ns]).output();
        }
        let _ = Command::new("ip")
            .args(["link", "del", &self.sender_link])
            .stderr(std::process::Stdio::null())
            .output();
    }
}

/// Move the calling thread into namespace `name` (by its /var/run/netns mount).
pub fn enter(name: &str) -> Result<(), String> {
    let path = format!("/var/run/netns/{name}");
    let file = std::fs::File::open(&path).map_err(|e| format!("{path}: {e}"))?;
    crate::system::kernel::enter_network_namespace(&file)
        .map_err(|e| format!("setns({path}): {e}"))?;
    Ok(())
}
