//! An empirical size model read from a pcap or pcapng capture.
//!
//! The size of each packet is the *IP total length* from its IP header (IPv4 Total Length; IPv6
//! Payload Length + 40), not the captured or on-the-wire frame length: that is what an IPsec-style
//! MAC covers, it is independent of the link layer, and it stays right when the capture was taken
//! with a small snap length. Two crates do the parsing, neither of which panics on any input:
//! `pcap-parser` (rusticata, fuzzed) reads the pcap/pcapng container, and `etherparse` the headers
//! in each frame — Ethernet II, each VLAN tag, IPv4 and IPv6. A length is taken only from a
//! complete IP header (20 bytes and its options for IPv4, 40 for IPv6).
//!
//! Link types: Ethernet (with any number of 802.1Q / 802.1ad / QinQ tags), Linux cooked SLL and
//! SLL2, raw IP (101, and the DLT_RAW values 12 and 14), raw IPv4 (228), raw IPv6 (229), BSD
//! loopback/null (0, host byte order) and OpenBSD loop (108, network byte order). Frames that do
//! not carry IP (ARP, LLDP, …) are skipped and counted, as are IP headers too broken to give a
//! length. In pcapng, packets on interfaces of other link types are skipped and counted too; a
//! capture whose only packets are of such interfaces is reported as an unsupported link type.
//!
//! Three link-layer headers are still read here, because etherparse does not read them as captures
//! carry them: SLL2 and BSD null/loop it does not know at all, and its SLL reader refuses the
//! hardware types `tcpdump -i any` records for loopback, tun and PPP devices (ARPHRD_LOOPBACK,
//! ARPHRD_NONE, ARPHRD_PPP). Each is a fixed-size header with the protocol at a known offset; past
//! it, the frame goes to etherparse like any other.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use etherparse::{
    EtherType, Ethernet2HeaderSlice, IpNumber, Ipv4HeaderSlice, Ipv6HeaderSlice,
    SingleVlanHeaderSlice,
};
use pcap_parser::pcapng::Block;
use pcap_parser::traits::{PcapNGPacketBlock, PcapReaderIterator};
use pcap_parser::{create_reader, PcapBlockOwned, PcapError};

use super::distribution::SizeDistribution;

/// Link types macbench can take IP packets from.
pub const SUPPORTED_LINK_TYPES: &[u16] = &[
    LINKTYPE_NULL,
    LINKTYPE_ETHERNET,
    DLT_RAW_12,
    DLT_RAW_14,
    LINKTYPE_RAW,
    LINKTYPE_LOOP,
    LINKTYPE_LINUX_SLL,
    LINKTYPE_IPV4,
    LINKTYPE_IPV6,
    LINKTYPE_LINUX_SLL2,
];

const LINKTYPE_NULL: u16 = 0;
const LINKTYPE_ETHERNET: u16 = 1;
const DLT_RAW_12: u16 = 12;
const DLT_RAW_14: u16 = 14;
const LINKTYPE_RAW: u16 = 101;
const LINKTYPE_LOOP: u16 = 108;
const LINKTYPE_LINUX_SLL: u16 = 113;
const LINKTYPE_IPV4: u16 = 228;
const LINKTYPE_IPV6: u16 = 229;
const LINKTYPE_LINUX_SLL2: u16 = 276;

/// Streaming buffer to start with; grown for larger records up to [`MAX_RECORD_BYTES`].
const INITIAL_BUFFER: usize = 1 << 18;
/// A record claiming more than this is taken as corruption, not as a packet.
const MAX_RECORD_BYTES: usize = 1 << 26;

/// The name tcpdump.org's registry gives a link type, for error messages.
pub fn link_type_name(link_type: u16) -> &'static str {
    match link_type {
        0 => "NULL",
        1 => "ETHERNET",
        6 => "IEEE802_5",
        8 => "SLIP",
        9 => "PPP",
        10 => "FDDI",
        12 | 14 => "RAW (DLT_RAW)",
        50 => "PPP_HDLC",
        51 => "PPP_ETHER",
        101 => "RAW",
        104 => "C_HDLC",
        105 => "IEEE802_11",
        107 => "FRELAY",
        108 => "LOOP",
        113 => "LINUX_SLL",
        119 => "IEEE802_11_PRISM",
        127 => "IEEE802_11_RADIOTAP",
        147..=162 => "USER",
        189 => "USB_LINUX",
        192 => "PPI",
        195 => "IEEE802_15_4_WITHFCS",
        201 => "BLUETOOTH_HCI_H4_WITH_PHDR",
        215 => "IEEE802_15_4_NONASK_PHY",
        220 => "USB_LINUX_MMAPPED",
        228 => "IPV4",
        229 => "IPV6",
        239 => "NFLOG",
        249 => "USBPCAP",
        252 => "WIRESHARK_UPPER_PDU",
        253 => "NETLINK",
        276 => "LINUX_SLL2",
        _ => "unassigned or unknown",
    }
}

/// An empirical model and what went into it.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    pub distribution: SizeDistribution,
    pub summary: CaptureSummary,
}

/// Counts from reading a capture: every packet record lands in exactly one bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CaptureSummary {
    /// `pcap` or `pcapng`.
    pub format: &'static str,
    /// Distinct link types seen (legacy pcap: the file's; pcapng: every interface's).
    pub link_types: Vec<u16>,
    /// Packet records in the file.
    pub records: u64,
    pub ipv4_packets: u64,
    pub ipv6_packets: u64,
    /// Frames that do not carry IP (ARP, LLDP, STP, …).
    pub skipped_non_ip: u64,
    /// Claimed IP but too short or inconsistent to give a total length (also IPv6 jumbograms).
    pub skipped_malformed: u64,
    /// pcapng packets on an interface whose link type macbench cannot read.
    pub skipped_unsupported_link: u64,
}

impl CaptureSummary {
    pub fn ip_packets(&self) -> u64 {
        self.ipv4_packets + self.ipv6_packets
    }
}

/// A capture that could not be used; `Display` is one line naming the file (and byte offset).
#[derive(Debug, thiserror::Error)]
#[error("{}: {kind}", path.display())]
pub struct CaptureError {
    pub path: PathBuf,
    pub kind: CaptureErrorKind,
}

#[derive(Debug, thiserror::Error)]
pub enum CaptureErrorKind {
    #[error("cannot read file: {0}")]
    Io(#[from] std::io::Error),
    #[error("file is empty: expected a pcap or pcapng capture")]
    Empty,
    #[error("not a pcap or pcapng file: magic {magic} at byte 0 (expected a1b2c3d4, a1b23c4d, their byte swaps, or pcapng 0a0d0d0a)")]
    NotACapture { magic: String },
    #[error("truncated at byte {offset}: {what} runs past the end of the file ({file_len} bytes)")]
    Truncated {
        offset: u64,
        what: &'static str,
        file_len: u64,
    },
    #[error("corrupt at byte {offset}: {detail}")]
    Corrupt { offset: u64, detail: String },
    #[error(
        "unsupported link type {link_type} ({name}) at byte {offset}; supported: {}",
        supported_list()
    )]
    UnsupportedLinkType {
        link_type: u16,
        name: &'static str,
        offset: u64,
    },
    #[error(
        "no IP packets: {records} records, {skipped_non_ip} non-IP, {skipped_malformed} malformed"
    )]
    NoIpPackets {
        records: u64,
        skipped_non_ip: u64,
        skipped_malformed: u64,
    },
}

fn supported_list() -> String {
    SUPPORTED_LINK_TYPES
        .iter()
        .map(|&t| format!("{t} {}", link_type_name(t)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The smallest size a capture can yield: an IPv4 header alone.
pub const MIN_CAPTURE_SIZE: u32 = 20;
/// The largest size a capture can yield: an IPv6 payload length of 65535 plus its 40-byte header
/// (IPv4 total lengths stop at 65535). Jumbograms are skipped as malformed.
pub const MAX_CAPTURE_SIZE: u32 = 65_535 + 40;

/// What one frame contributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameSize {
    Ipv4(u32),
    Ipv6(u32),
    NotIp,
    Malformed,
}

/// IP total length of one captured frame of the given link type (`None`: link type unsupported).
pub fn frame_ip_length(link_type: u16, frame: &[u8]) -> Option<FrameSize> {
    let size = match link_type {
        LINKTYPE_ETHERNET => match Ethernet2HeaderSlice::from_slice(frame) {
            Ok(ethernet) => by_ethertype(
                ethernet.ether_type(),
                frame.get(ethernet.slice().len()..).unwrap_or_default(),
            ),
            Err(_) => FrameSize::Malformed,
        },
        // By hand (see the module notes): 16 bytes, the protocol in the last two.
        LINKTYPE_LINUX_SLL => match (ether_type_at(frame, 14), frame.get(16..)) {
            (Some(protocol), Some(rest)) => by_ethertype(protocol, rest),
            _ => FrameSize::Malformed,
        },
        // By hand: 20 bytes, the protocol in the first two.
        LINKTYPE_LINUX_SLL2 => match (ether_type_at(frame, 0), frame.get(20..)) {
            (Some(protocol), Some(rest)) => by_ethertype(protocol, rest),
            _ => FrameSize::Malformed,
        },
        // No link header: the version nibble says which IP it is.
        LINKTYPE_RAW | DLT_RAW_12 | DLT_RAW_14 => match frame.first().map(|b| b >> 4) {
            Some(4) => ipv4(frame),
            Some(6) => ipv6(frame),
            _ => FrameSize::Malformed,
        },
        LINKTYPE_IPV4 => ipv4(frame),
        LINKTYPE_IPV6 => ipv6(frame),
        // By hand: a 4-byte address family.
        LINKTYPE_NULL | LINKTYPE_LOOP => match frame.get(0..4).map(<[u8; 4]>::try_from) {
            Some(Ok(family)) => {
                // DLT_NULL is in the capturing host's byte order; LOOP is big-endian. Accept both
                // orders for both: the AF values cannot be confused.
                let candidates = [u32::from_le_bytes(family), u32::from_be_bytes(family)];
                let payload = &frame[4..];
                if candidates.contains(&2) {
                    ipv4(payload)
                } else if candidates.iter().any(|f| [10, 24, 28, 30].contains(f)) {
                    // AF_INET6 on Linux, NetBSD/OpenBSD, FreeBSD, macOS.
                    ipv6(payload)
                } else {
                    FrameSize::NotIp
                }
            }
            _ => FrameSize::Malformed,
        },
        _ => return None,
    };
    Some(size)
}

/// The big-endian EtherType at byte `at`, if the frame reaches that far.
fn ether_type_at(frame: &[u8], at: usize) -> Option<EtherType> {
    let bytes = <[u8; 2]>::try_from(frame.get(at..at + 2)?).ok()?;
    Some(EtherType(u16::from_be_bytes(bytes)))
}

/// The frame after its link header, by the EtherType the link header gave: VLAN tags peeled, then IP.
fn by_ethertype(mut ether_type: EtherType, mut rest: &[u8]) -> FrameSize {
    // 802.1Q, 802.1ad and the old QinQ type, as many as there are (etherparse's packet slicers
    // stop after three link extensions; one tag at a time they do not).
    while matches!(
        ether_type,
        EtherType::VLAN_TAGGED_FRAME
            | EtherType::PROVIDER_BRIDGING
            | EtherType::VLAN_DOUBLE_TAGGED_FRAME
    ) {
        match SingleVlanHeaderSlice::from_slice(rest) {
            Ok(tag) => {
                ether_type = tag.ether_type();
                rest = rest.get(tag.slice().len()..).unwrap_or_default();
            }
            Err(_) => return FrameSize::Malformed,
        }
    }
    match ether_type {
        EtherType::IPV4 => ipv4(rest),
        EtherType::IPV6 => ipv6(rest),
        _ => FrameSize::NotIp,
    }
}

fn ipv4(packet: &[u8]) -> FrameSize {
    match Ipv4HeaderSlice::from_slice(packet) {
        Ok(header) => {
            let header_len = u32::from(header.ihl()) * 4;
            let total = u32::from(header.total_len());
            // Total length 0 is what TSO/BIG TCP super-packets carry: not a size.
            if total < header_len {
                FrameSize::Malformed
            } else {
                FrameSize::Ipv4(total)
            }
        }
        // Too short for its header, not version 4, or a header length below 20.
        Err(_) => FrameSize::Malformed,
    }
}

fn ipv6(packet: &[u8]) -> FrameSize {
    match Ipv6HeaderSlice::from_slice(packet) {
        Ok(header) => {
            let payload = u32::from(header.payload_length());
            // Payload length 0 with a hop-by-hop header is a jumbogram (or BIG TCP): its size is
            // in an option, and it is not a packet size an IP MAC model should use.
            if payload == 0 && header.next_header() == IpNumber::IPV6_HEADER_HOP_BY_HOP {
                FrameSize::Malformed
            } else {
                FrameSize::Ipv6(payload + 40)
            }
        }
        Err(_) => FrameSize::Malformed,
    }
}

/// Read a pcap or pcapng file into an empirical model named after the file stem.
pub fn read_capture(path: &Path) -> Result<Capture, CaptureError> {
    let err = |kind| CaptureError {
        path: path.to_path_buf(),
        kind,
    };
    let file = crate::system::input::open_input(path).map_err(|e| err(CaptureErrorKind::Io(e)))?;
    let file_len = file.metadata().map(|m| m.len()).ok();
    read_capture_from(path, file, file_len)
}

/// Read a capture from any reader; `path` names it in errors and provenance. `file_len`, when
/// known, makes "truncated" messages say how long the file is.
pub fn read_capture_from<R: Read + Send>(
    path: &Path,
    reader: R,
    file_len: Option<u64>,
) -> Result<Capture, CaptureError> {
    let err = |kind| CaptureError {
        path: path.to_path_buf(),
        kind,
    };
    let mut counting = Counting {
        inner: reader,
        read: 0,
        first: Vec::new(),
    };
    let mut counts: BTreeMap<u32, u64> = BTreeMap::new();
    let mut summary = CaptureSummary::default();
    let mut first_unsupported: Option<(u16, u64)> = None;
    let result = scan(
        &mut counting,
        &mut counts,
        &mut summary,
        &mut first_unsupported,
    );
    if let Err(kind) = result {
        return Err(err(match kind {
            ScanError::Kind(kind) => kind,
            ScanError::Truncated { offset, what } => CaptureErrorKind::Truncated {
                offset,
                what,
                file_len: file_len.unwrap_or(counting.read),
            },
            ScanError::NotRecognized => {
                if counting.first.len() >= 4 && counting.first[..4] == [0x0a, 0x0d, 0x0d, 0x0a] {
                    CaptureErrorKind::Corrupt {
                        offset: 0,
                        detail: "pcapng section header block is truncated or malformed".into(),
                    }
                } else {
                    CaptureErrorKind::NotACapture {
                        magic: hex::encode(&counting.first[..counting.first.len().min(4)]),
                    }
                }
            }
        }));
    }
    if counts.is_empty() {
        if let Some((link_type, offset)) = first_unsupported {
            return Err(err(CaptureErrorKind::UnsupportedLinkType {
                link_type,
                name: link_type_name(link_type),
                offset,
            }));
        }
        return Err(err(CaptureErrorKind::NoIpPackets {
            records: summary.records,
            skipped_non_ip: summary.skipped_non_ip,
            skipped_malformed: summary.skipped_malformed,
        }));
    }
    summary.link_types.sort_unstable();
    summary.link_types.dedup();
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "capture".to_string());
    let provenance = format!(
        "{} {}: {} IP packets of {} records ({} IPv4, {} IPv6; skipped {} non-IP, {} malformed, {} on unsupported links)",
        summary.format,
        path.display(),
        summary.ip_packets(),
        summary.records,
        summary.ipv4_packets,
        summary.ipv6_packets,
        summary.skipped_non_ip,
        summary.skipped_malformed,
        summary.skipped_unsupported_link,
    );
    let distribution = SizeDistribution::from_weights(
        name,
        provenance,
        counts.iter().map(|(&s, &c)| (s, c as f64)),
    )
    .map_err(|e| {
        err(CaptureErrorKind::Corrupt {
            offset: 0,
            detail: e.to_string(),
        })
    })?;
    Ok(Capture {
        distribution,
        summary,
    })
}

/// Counts bytes handed out, keeps the first 4 (for the magic in errors), and fills each read
/// completely unless at end of input: `pcap-parser` probes the header with a single `read`.
struct Counting<R> {
    inner: R,
    read: u64,
    first: Vec<u8>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.inner.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        if self.first.len() < 4 {
            let take = (4 - self.first.len()).min(filled);
            self.first.extend_from_slice(&buf[..take]);
        }
        self.read += filled as u64;
        Ok(filled)
    }
}

enum ScanError {
    Kind(CaptureErrorKind),
    Truncated { offset: u64, what: &'static str },
    NotRecognized,
}

/// What to do after one `next()`; owns nothing borrowed from the reader.
enum Step {
    Consume(usize),
    Refill,
    Grow,
    Done,
    Fail(ScanError),
}

/// The error of a failed read from the capture (its cause is not kept by `pcap-parser`).
fn read_failed() -> ScanError {
    ScanError::Kind(CaptureErrorKind::Io(std::io::Error::other("read failed")))
}

/// Read the capture block by block into `counts` and `summary` (and the first packet on a link type
/// macbench cannot read), refilling and growing the reader's buffer as records need.
fn scan<R: Read + Send>(
    input: &mut Counting<R>,
    counts: &mut BTreeMap<u32, u64>,
    summary: &mut CaptureSummary,
    first_unsupported: &mut Option<(u16, u64)>,
) -> Result<(), ScanError> {
    let mut reader = open_reader(input)?;
    let mut capacity = INITIAL_BUFFER;
    let mut tally = Tally {
        counts,
        summary,
        first_unsupported,
        legacy_link: None,
        interfaces: Vec::new(),
    };
    loop {
        let offset = reader.consumed() as u64;
        let step = match reader.next() {
            Ok((len, block)) => {
                tally.block(block, offset)?;
                Step::Consume(len)
            }
            Err(e) => step_after(e, offset, tally.summary.format),
        };
        match step {
            Step::Consume(len) => reader.consume(len),
            Step::Done => return Ok(()),
            Step::Fail(e) => return Err(e),
            Step::Refill => {
                let before = reader.data().len();
                if reader.refill().is_err() {
                    return Err(read_failed());
                }
                // No progress and not at end of input: the buffer is full, so it must grow.
                if reader.data().len() == before && !reader.reader_exhausted() {
                    grow(&mut *reader, &mut capacity, offset, tally.summary.format)?;
                }
            }
            Step::Grow => grow(&mut *reader, &mut capacity, offset, tally.summary.format)?,
        }
    }
}

/// A reader of whichever format the file's first bytes say, or why there is none.
fn open_reader<'a, R: Read + Send>(
    input: &'a mut Counting<R>,
) -> Result<Box<dyn PcapReaderIterator + Send + 'a>, ScanError> {
    match create_reader(INITIAL_BUFFER, input) {
        Ok(r) => Ok(r),
        Err(PcapError::Eof) => Err(ScanError::Kind(CaptureErrorKind::Empty)),
        Err(PcapError::Incomplete(_)) | Err(PcapError::UnexpectedEof) => {
            Err(ScanError::Truncated {
                offset: 0,
                what: "the file header",
            })
        }
        Err(PcapError::ReadError) => Err(read_failed()),
        Err(_) => Err(ScanError::NotRecognized),
    }
}

/// What to do when reading the block at `offset` failed with `e`.
fn step_after<I>(e: PcapError<I>, offset: u64, format: &str) -> Step {
    match e {
        PcapError::Eof => Step::Done,
        PcapError::Incomplete(_) => Step::Refill,
        PcapError::BufferTooSmall => Step::Grow,
        PcapError::UnexpectedEof => Step::Fail(ScanError::Truncated {
            offset,
            what: if format == "pcapng" {
                "the block starting there"
            } else {
                "the record starting there"
            },
        }),
        PcapError::ReadError => Step::Fail(read_failed()),
        PcapError::NomError(_, kind) | PcapError::OwnedNomError(_, kind) => {
            Step::Fail(ScanError::Kind(CaptureErrorKind::Corrupt {
                offset,
                detail: format!("unparsable {} ({kind:?})", block_word(format)),
            }))
        }
        PcapError::HeaderNotRecognized => Step::Fail(ScanError::NotRecognized),
    }
}

/// What the blocks read so far add up to: the sizes and the summary, the first packet on a link type
/// macbench cannot read, and the link types in force (legacy pcap: the one of the file; pcapng: one
/// per interface of the current section).
struct Tally<'a> {
    counts: &'a mut BTreeMap<u32, u64>,
    summary: &'a mut CaptureSummary,
    first_unsupported: &'a mut Option<(u16, u64)>,
    legacy_link: Option<u16>,
    interfaces: Vec<u16>,
}

impl Tally<'_> {
    /// Take in the block at `offset`: a header or interface sets link types, a packet is counted.
    fn block(&mut self, block: PcapBlockOwned, offset: u64) -> Result<(), ScanError> {
        match block {
            PcapBlockOwned::LegacyHeader(header) => {
                self.summary.format = "pcap";
                // The upper bits may carry FCS information (pcap spec §LinkType).
                let link_type = (header.network.0 & 0xffff) as u16;
                self.summary.link_types.push(link_type);
                if frame_ip_length(link_type, &[]).is_none() {
                    return Err(ScanError::Kind(CaptureErrorKind::UnsupportedLinkType {
                        link_type,
                        name: link_type_name(link_type),
                        offset: 20,
                    }));
                }
                self.legacy_link = Some(link_type);
            }
            PcapBlockOwned::Legacy(record) => {
                let link_type = self.legacy_link.unwrap_or(LINKTYPE_ETHERNET);
                self.packet(link_type, record.data, offset);
            }
            PcapBlockOwned::NG(Block::SectionHeader(_)) => {
                self.summary.format = "pcapng";
                self.interfaces.clear();
            }
            PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
                let link_type = (idb.linktype.0 & 0xffff) as u16;
                self.summary.link_types.push(link_type);
                self.interfaces.push(link_type);
            }
            PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                match self.interfaces.get(epb.if_id as usize) {
                    Some(&link_type) => self.packet(link_type, epb.packet_data(), offset),
                    None => {
                        return Err(ScanError::Kind(CaptureErrorKind::Corrupt {
                            offset,
                            detail: format!(
                                "packet on interface {} but the section describes {} interface(s)",
                                epb.if_id,
                                self.interfaces.len()
                            ),
                        }))
                    }
                }
            }
            PcapBlockOwned::NG(Block::SimplePacket(spb)) => match self.interfaces.first() {
                Some(&link_type) => self.packet(link_type, spb.packet_data(), offset),
                None => {
                    return Err(ScanError::Kind(CaptureErrorKind::Corrupt {
                        offset,
                        detail: "simple packet block before any interface description".into(),
                    }))
                }
            },
            PcapBlockOwned::NG(_) => {}
        }
        Ok(())
    }

    /// Count one packet record: its IP size, or the bucket it was skipped into.
    fn packet(&mut self, link_type: u16, data: &[u8], offset: u64) {
        self.summary.records += 1;
        match frame_ip_length(link_type, data) {
            Some(FrameSize::Ipv4(n)) => {
                self.summary.ipv4_packets += 1;
                *self.counts.entry(n).or_insert(0) += 1;
            }
            Some(FrameSize::Ipv6(n)) => {
                self.summary.ipv6_packets += 1;
                *self.counts.entry(n).or_insert(0) += 1;
            }
            Some(FrameSize::NotIp) => self.summary.skipped_non_ip += 1,
            Some(FrameSize::Malformed) => self.summary.skipped_malformed += 1,
            None => {
                self.summary.skipped_unsupported_link += 1;
                self.first_unsupported.get_or_insert((link_type, offset));
            }
        }
    }
}

fn block_word(format: &str) -> &'static str {
    if format == "pcapng" {
        "block"
    } else {
        "record"
    }
}

fn grow(
    reader: &mut (dyn PcapReaderIterator + Send),
    capacity: &mut usize,
    offset: u64,
    format: &str,
) -> Result<(), ScanError> {
    let next = *capacity * 2;
    if next > MAX_RECORD_BYTES || !reader.grow(next) {
        return Err(ScanError::Kind(CaptureErrorKind::Corrupt {
            offset,
            detail: format!(
                "{} claims more than {} MiB",
                block_word(format),
                MAX_RECORD_BYTES >> 20
            ),
        }));
    }
    *capacity = next;
    reader.refill().map_err(|_| read_failed())
}
