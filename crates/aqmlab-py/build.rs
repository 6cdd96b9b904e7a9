//! Build fingerprint: a hash of the sources compiled into this extension, and the git
//! commit they came from.
//!
//! Sweeps record the fingerprint with every run and refuse to resume over runs made by
//! a different build (results could differ). It is computed here, at build time, from
//! the files actually compiled: hashing sources from Python at import time would
//! describe the working tree, which can differ from the installed binary (edited but
//! not rebuilt), and an installed wheel has no sources to hash at all.

use std::path::{Path, PathBuf};
use std::process::Command;

/// FNV-1a, 64 bit: stable across Rust versions (std's `DefaultHasher` is not).
fn fnv1a(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= u64::from(b);
        *h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if matches!(p.extension().and_then(|x| x.to_str()), Some("rs" | "toml")) {
            out.push(p);
        }
    }
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let core = here.join("../aqmlab-core");
    let roots = [
        core.join("src"),
        core.join("Cargo.toml"),
        here.join("src"),
        here.join("Cargo.toml"),
    ];
    let mut files = Vec::new();
    for r in &roots {
        println!("cargo:rerun-if-changed={}", r.display());
        if r.is_dir() {
            collect(r, &mut files);
        } else {
            files.push(r.clone());
        }
    }
    files.sort(); // a fixed order: the hash must not depend on directory listing order
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in &files {
        let rel = f.strip_prefix(&here).unwrap_or(f);
        fnv1a(&mut h, rel.to_string_lossy().as_bytes());
        fnv1a(&mut h, &[0]);
        fnv1a(&mut h, &std::fs::read(f).unwrap_or_default());
        fnv1a(&mut h, &[0]);
    }
    println!("cargo:rustc-env=AQMLAB_SOURCE_HASH={h:016x}");
    let git = Command::new("git")
        .args(["describe", "--always", "--dirty", "--tags"])
        .current_dir(&here)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=AQMLAB_GIT_DESCRIBE={git}");
}
