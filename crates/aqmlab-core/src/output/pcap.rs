//! pcap writer (nanosecond-resolution libpcap format, link type Ethernet).
//!
//! Each packet is written when the link starts serialising it. Only headers are
//! captured (Ethernet 14 B + IPv4 20 B + UDP 8 B or TCP 20 B + timestamp and SACK
//! options); the record's original length is the full frame (14 + IP datagram size), so tshark shows
//! true sizes and flags the missing payload as "packet size limited during capture".
//! Addresses: node n is 10.0.(n+1)/256.(n+1)%256 and MAC 02:00:00:00:hi:lo; flow f uses
//! source port 10000 + f mod 50000 and destination port 5001 (swapped on reverse
//! packets). IPv4 header checksums are correct; UDP checksums are 0 ("none", legal in
//! IPv4); TCP checksums are 0 because the payload is not modelled.

use crate::net::packet::{Packet, PacketKind};
use crate::sim::time::{Nanos, NS_PER_S};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub struct PcapWriter {
    out: BufWriter<File>,
    buf: Vec<u8>,
}

fn ipv4(node: u32) -> [u8; 4] {
    let n = node + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

fn mac(node: u32) -> [u8; 6] {
    let n = node + 1;
    [0x02, 0, 0, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

fn checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in bytes.chunks(2) {
        let w = if c.len() == 2 {
            u16::from_be_bytes([c[0], c[1]])
        } else {
            u16::from_be_bytes([c[0], 0])
        };
        sum += w as u32;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl PcapWriter {
    /// Create (or truncate) the file at `path`. A symlink there is refused
    /// (`O_NOFOLLOW`): output never writes through a link into someone else's file.
    pub fn create(path: &Path) -> std::io::Result<PcapWriter> {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.custom_flags(libc::O_NOFOLLOW);
        }
        let file: File = opts.open(path).map_err(|e| {
            if path.is_symlink() {
                std::io::Error::other(format!(
                    "{}: is a symlink; refusing to write through it",
                    path.display()
                ))
            } else {
                e
            }
        })?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        out.write_all(&0xa1b2_3c4du32.to_le_bytes())?; // nanosecond magic
        out.write_all(&2u16.to_le_bytes())?;
        out.write_all(&4u16.to_le_bytes())?;
        out.write_all(&0i32.to_le_bytes())?; // thiszone
        out.write_all(&0u32.to_le_bytes())?; // sigfigs
        out.write_all(&65535u32.to_le_bytes())?; // snaplen
        out.write_all(&1u32.to_le_bytes())?; // LINKTYPE_ETHERNET
        Ok(PcapWriter {
            out,
            buf: Vec::with_capacity(128),
        })
    }

    pub fn write(&mut self, now: Nanos, p: &Packet) -> std::io::Result<()> {
        let b = &mut self.buf;
        b.clear();
        // Ethernet
        b.extend_from_slice(&mac(p.dst));
        b.extend_from_slice(&mac(p.src));
        b.extend_from_slice(&0x0800u16.to_be_bytes());
        // IPv4
        let ip_start = b.len();
        let is_tcp = p.kind == PacketKind::Tcp;
        b.push(0x45);
        b.push((p.dscp << 2) | p.ecn.bits());
        b.extend_from_slice(&(p.size.min(65535) as u16).to_be_bytes());
        b.extend_from_slice(&(p.uid as u16).to_be_bytes());
        b.extend_from_slice(&0x4000u16.to_be_bytes()); // DF
        b.push(64);
        b.push(if is_tcp { 6 } else { 17 });
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&ipv4(p.src));
        b.extend_from_slice(&ipv4(p.dst));
        let c = checksum(&b[ip_start..ip_start + 20]);
        b[ip_start + 10..ip_start + 12].copy_from_slice(&c.to_be_bytes());
        let (mut sport, mut dport) = (10000 + (p.flow % 50000) as u16, 5001u16);
        if p.reverse {
            std::mem::swap(&mut sport, &mut dport);
        }
        b.extend_from_slice(&sport.to_be_bytes());
        b.extend_from_slice(&dport.to_be_bytes());
        if is_tcp {
            let t = &p.tcp;
            let n = t.sack_len as usize;
            let sack_len = if n > 0 { 2 + 2 + 8 * n } else { 0 };
            // The timestamp option (NOP, NOP, kind 8, len 10) when the sender counted it
            // in the wire size (`TcpConfig::header_bytes`), so that the IP length minus
            // the headers is the payload.
            let ts = t.hdr_bytes as usize >= 40 + 12 + sack_len;
            let opt_len = sack_len + if ts { 12 } else { 0 };
            b.extend_from_slice(&(t.seq as u32).to_be_bytes());
            b.extend_from_slice(&(t.ack as u32).to_be_bytes());
            b.push((((20 + opt_len) / 4) as u8) << 4);
            b.push(t.flags);
            b.extend_from_slice(&(t.window.min(65535) as u16).to_be_bytes());
            b.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
            if ts {
                b.extend_from_slice(&[1, 1, 8, 10]);
                b.extend_from_slice(&(t.ts_val as u32).to_be_bytes());
                b.extend_from_slice(&(t.ts_ecr as u32).to_be_bytes());
            }
            if n > 0 {
                b.extend_from_slice(&[1, 1, 5, (2 + 8 * n) as u8]);
                for &(s, e) in &t.sack[..n] {
                    b.extend_from_slice(&(s as u32).to_be_bytes());
                    b.extend_from_slice(&(e as u32).to_be_bytes());
                }
            }
        } else {
            b.extend_from_slice(&(p.size.saturating_sub(20).min(65535) as u16).to_be_bytes());
            b.extend_from_slice(&[0, 0]);
        }
        let w = &mut self.out;
        w.write_all(&((now / NS_PER_S) as u32).to_le_bytes())?;
        w.write_all(&((now % NS_PER_S) as u32).to_le_bytes())?;
        w.write_all(&(b.len() as u32).to_le_bytes())?;
        w.write_all(&(14 + p.size).to_le_bytes())?;
        w.write_all(b)
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A link name as a file stem: ASCII letters, digits, `_` and `.` kept, anything else `_`.
fn file_stem(link: &str) -> String {
    link.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The pcap file of `link` in `dir`, distinct from every path in `taken`.
///
/// Sanitising can map two link names to one stem (`a-b` and `a b` both give `a_b`);
/// the second then gets `a_b-2.pcap`, the third `a_b-3.pcap`. A sanitised stem never
/// contains `-`, so a suffixed name cannot collide with another link's plain one.
pub fn unique_pcap_path(dir: &Path, link: &str, taken: &[PathBuf]) -> PathBuf {
    let stem = file_stem(link);
    let mut path = dir.join(format!("{stem}.pcap"));
    let mut k = 2u32;
    while taken.contains(&path) {
        path = dir.join(format!("{stem}-{k}.pcap"));
        k += 1;
    }
    path
}

/// Distinct pcap paths in `dir` for `links`, in order (see `unique_pcap_path`).
pub fn pcap_paths(dir: &Path, links: &[&str]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::with_capacity(links.len());
    for l in links {
        let p = unique_pcap_path(dir, l, &out);
        out.push(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_whose_sanitised_names_collide_get_distinct_files() {
        let d = Path::new("/o");
        let got = pcap_paths(d, &["a-b", "a b", "a_b", "c", "a/b"]);
        let names: Vec<String> = got.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(
            names,
            [
                "/o/a_b.pcap",
                "/o/a_b-2.pcap",
                "/o/a_b-3.pcap",
                "/o/c.pcap",
                "/o/a_b-4.pcap"
            ]
        );
    }

    #[test]
    fn a_link_name_cannot_leave_the_output_directory() {
        let p = unique_pcap_path(Path::new("/o"), "../../etc/x", &[]);
        assert_eq!(p, Path::new("/o/.._.._etc_x.pcap"));
        assert_eq!(p.parent(), Some(Path::new("/o")));
    }

    #[test]
    fn a_symlink_at_the_pcap_path_is_refused_and_its_target_untouched() {
        let dir = std::env::temp_dir().join(format!("aqmlab-pcap-link-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("victim.txt");
        std::fs::write(&target, b"keep me").unwrap();
        let link = dir.join("l.pcap");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = PcapWriter::create(&link)
            .err()
            .expect("a link must be refused");
        assert!(e.to_string().contains("symlink"), "{e}");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep me");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn ipv4_checksum_of_a_known_header() {
        // Example header from RFC 1071 discussions (checksum field zeroed): 0xb861.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(checksum(&h), 0xb861);
    }

    /// A 1448 B TCP segment sent with the timestamp option (52 B of headers): the
    /// capture's IP length minus its IP and TCP headers is the payload.
    #[test]
    fn tcp_headers_carry_the_timestamp_option_the_wire_size_counts() {
        let path = std::env::temp_dir().join(format!("aqmlab-pcap-ts-{}.pcap", std::process::id()));
        let mut w = PcapWriter::create(&path).unwrap();
        let mut p = Packet {
            kind: PacketKind::Tcp,
            size: 1500,
            dscp: 46,
            class: 3,
            ..Default::default()
        };
        p.tcp.payload = 1448;
        p.tcp.hdr_bytes = 52;
        p.tcp.ts_val = 7;
        p.tcp.ts_ecr = 5;
        w.write(0, &p).unwrap();
        w.flush().unwrap();
        drop(w);
        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let frame = &bytes[24 + 16..];
        let ip = &frame[14..];
        let ip_len = u16::from_be_bytes([ip[2], ip[3]]) as usize;
        assert_eq!(
            ip[1],
            46 << 2,
            "the DS field carries the DSCP (EF), not the class"
        );
        let tcp = &ip[20..];
        let doff = (tcp[12] >> 4) as usize * 4;
        assert_eq!(doff, 32);
        assert_eq!(&tcp[20..24], &[1, 1, 8, 10]);
        assert_eq!(u32::from_be_bytes([tcp[24], tcp[25], tcp[26], tcp[27]]), 7);
        assert_eq!(ip_len - 20 - doff, 1448);
    }
}
