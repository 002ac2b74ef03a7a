//! Packet-size models (placeholder; being written).
