//! Classifiers: which child queue of a multi-queue scheduler a packet joins.
//!
//! Three modes, chosen per scheduler with `classify`:
//!
//! - `flow`: a stochastic flow hash, as Linux SFQ and FQ-CoDel do. `Packet::hash` is the
//!   5-tuple hash computed once when the packet was created; here it is mixed again
//!   with a 32-bit salt (Linux: the `perturbation` siphash key of `sch_sfq.c`, the
//!   `perturbation` jhash seed of `sch_fq_codel.c`), then reduced to `n` buckets with
//!   Linux's `reciprocal_scale` (`(h * n) >> 32`, the top bits of the mixed hash).
//!   Changing the salt (SFQ's `perturb`) re-draws which flows collide. If `salt` is not
//!   given, it is drawn from the discipline's random stream at the first packet, so it
//!   differs between seeds but is reproducible for a given seed (Linux draws it at
//!   random when the qdisc is created).
//! - `class`: the packet's priority class (`Packet::class`, DSCP-like, higher = more
//!   important) through a map `priomap = [q0, q1, ...]` (entry `c` is the queue of
//!   class `c`; classes beyond the list use its last entry). Each scheduler supplies
//!   its default map (DRR: class `c` → queue `min(c, n-1)`; prio: the highest class
//!   → band 0, see `prio.rs`).
//! - `tag`: the application tag's unit type (`Packet::tag.unit_type`, e.g. video frame
//!   type 1 = I, 2 = P, 3 = B) through `tag_map = [...]`, indexed by unit type the same
//!   way; by default type `t` → queue `min(t, n-1)`.

use crate::net::packet::Packet;
use crate::scenario::error::Result;
use crate::scenario::params::{ParamDoc, Params};
use crate::sim::rng::Rng;
use serde_json::Value;

/// How packets are sorted into queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Flow,
    Class,
    Tag,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Flow => "flow",
            Mode::Class => "class",
            Mode::Tag => "tag",
        }
    }
}

pub const PARAM_CLASSIFY: ParamDoc = ParamDoc {
    name: "classify",
    ty: "string",
    default: "flow",
    doc: "flow (salted 5-tuple hash), class (packet priority class via priomap) or tag (app unit type via tag_map)",
};
pub const PARAM_SALT: ParamDoc = ParamDoc {
    name: "salt",
    ty: "int",
    default: "random",
    doc: "32-bit hash perturbation for classify = flow (default: drawn from the run's seed)",
};
pub const PARAM_PRIOMAP: ParamDoc = ParamDoc {
    name: "priomap",
    ty: "list of int",
    default: "per scheduler",
    doc: "classify = class: queue of class 0, 1, ...; later classes use the last entry",
};
pub const PARAM_TAG_MAP: ParamDoc = ParamDoc {
    name: "tag_map",
    ty: "list of int",
    default: "type t -> min(t, n-1)",
    doc: "classify = tag: queue of app unit type 0, 1, ...; later types use the last entry",
};

/// The bucket of a 32-bit hash among `n`: Linux `reciprocal_scale`.
#[inline]
pub fn reciprocal_scale(h: u32, n: u32) -> u32 {
    ((h as u64 * n as u64) >> 32) as u32
}

/// Mix a packet's 5-tuple hash with a salt (a 64-bit finaliser, Stafford's variant 13
/// as in SplitMix64), keeping 32 bits.
#[inline]
pub fn salted_hash(hash: u32, salt: u32) -> u32 {
    let mut z = ((salt as u64) << 32 | hash as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as u32
}

#[derive(Clone, Debug)]
pub struct Classifier {
    pub mode: Mode,
    /// Number of queues.
    n: u32,
    salt: u32,
    /// False until the salt is fixed (given, or drawn at the first packet).
    salt_set: bool,
    /// class or unit type → queue, for `Class` and `Tag` (256 entries).
    map: Vec<u32>,
}

/// Read a list of queue indices `< n` at key `name`.
fn index_list(p: &mut Params, name: &'static str, n: u32) -> Result<Option<Vec<u32>>> {
    let Some(v) = p.raw(name) else {
        return Ok(None);
    };
    let Value::Array(items) = v else {
        return Err(p.error(
            name,
            format!(
                "{}: expected a list of queue indices like [0, 1, 1]",
                crate::scenario::params::show_value(v)
            ),
        ));
    };
    if items.is_empty() || items.len() > 256 {
        return Err(p.error(name, "expected a list of 1 to 256 queue indices"));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        match it.as_u64() {
            Some(x) if x < n as u64 => out.push(x as u32),
            _ => {
                return Err(p.error(
                    &format!("{name}[{i}]"),
                    format!(
                        "{}: expected a queue index from 0 to {}",
                        crate::scenario::params::show_value(it),
                        n - 1
                    ),
                ))
            }
        }
    }
    Ok(Some(out))
}

/// Extend a user map to 256 entries (later entries repeat the last one).
fn full_map(user: &[u32]) -> Vec<u32> {
    let last = *user.last().expect("non-empty");
    (0..256)
        .map(|i| user.get(i).copied().unwrap_or(last))
        .collect()
}

impl Classifier {
    /// A flow-hash classifier over `n` buckets with a fixed salt.
    pub fn flow(n: u32, salt: u32) -> Self {
        Classifier {
            mode: Mode::Flow,
            n,
            salt,
            salt_set: true,
            map: Vec::new(),
        }
    }

    /// A classifier by `Packet::class` through `map` (extended to 256 entries).
    pub fn class(n: u32, map: &[u32]) -> Self {
        Classifier {
            mode: Mode::Class,
            n,
            salt: 0,
            salt_set: true,
            map: full_map(map),
        }
    }

    /// Read `classify`, `salt`, `priomap`, `tag_map` for a scheduler with `n` queues.
    /// `modes` are the modes this scheduler accepts (the first is the default);
    /// `default_class_map(c, n)` is its map of class `c` when no `priomap` is given.
    pub fn from_params(
        p: &mut Params,
        n: u32,
        modes: &[Mode],
        default_class_map: fn(u32, u32) -> u32,
    ) -> Result<Self> {
        let names: Vec<&'static str> = modes.iter().map(|m| m.name()).collect();
        let mode = if modes.len() > 1 {
            match p.choice_or("classify", names[0], &names)? {
                "class" => Mode::Class,
                "tag" => Mode::Tag,
                _ => Mode::Flow,
            }
        } else {
            modes[0]
        };
        let salt = match modes.contains(&Mode::Flow).then(|| p.raw("salt")).flatten() {
            None => None,
            Some(v) => match v.as_u64() {
                Some(x) if x <= u32::MAX as u64 => Some(x as u32),
                _ => {
                    return Err(p.error(
                        "salt",
                        format!(
                            "{}: expected a whole number from 0 to 4294967295",
                            crate::scenario::params::show_value(v)
                        ),
                    ))
                }
            },
        };
        let priomap = if modes.contains(&Mode::Class) {
            index_list(p, "priomap", n)?
        } else {
            None
        };
        let tag_map = if modes.contains(&Mode::Tag) {
            index_list(p, "tag_map", n)?
        } else {
            None
        };
        let misplaced = |key: &str, used_by: Mode| {
            p.error(
                key,
                format!(
                    "only used with classify = \"{}\" (this discipline classifies by {})",
                    used_by.name(),
                    mode.name()
                ),
            )
        };
        if salt.is_some() && mode != Mode::Flow {
            return Err(misplaced("salt", Mode::Flow));
        }
        if priomap.is_some() && mode != Mode::Class {
            return Err(misplaced("priomap", Mode::Class));
        }
        if tag_map.is_some() && mode != Mode::Tag {
            return Err(misplaced("tag_map", Mode::Tag));
        }
        let map = match mode {
            Mode::Flow => Vec::new(),
            Mode::Class => match priomap {
                Some(m) => full_map(&m),
                None => (0..256).map(|c| default_class_map(c, n)).collect(),
            },
            Mode::Tag => match tag_map {
                Some(m) => full_map(&m),
                None => (0..256).map(|t| t.min(n - 1)).collect(),
            },
        };
        Ok(Classifier {
            mode,
            n,
            salt: salt.unwrap_or(0),
            salt_set: salt.is_some(),
            map,
        })
    }

    /// The queue of `pkt`, in `0..n`.
    #[inline]
    pub fn classify(&mut self, pkt: &Packet, rng: &mut Rng) -> u32 {
        match self.mode {
            Mode::Flow => reciprocal_scale(self.hash(pkt, rng), self.n),
            Mode::Class => self.map[pkt.class as usize],
            Mode::Tag => self.map[pkt.tag.unit_type as usize],
        }
    }

    /// The salted 32-bit flow hash of `pkt` (before reduction to a bucket).
    #[inline]
    pub fn hash(&mut self, pkt: &Packet, rng: &mut Rng) -> u32 {
        if !self.salt_set {
            self.perturb(rng);
        }
        salted_hash(pkt.hash, self.salt)
    }

    /// Draw a new salt (SFQ's periodic perturbation).
    pub fn perturb(&mut self, rng: &mut Rng) {
        self.salt = rng.next_u64() as u32;
        self.salt_set = true;
    }

    pub fn salt(&self) -> Option<u32> {
        self.salt_set.then_some(self.salt)
    }

    pub fn set_salt(&mut self, salt: u32) {
        self.salt = salt;
        self.salt_set = true;
    }

    pub fn queues(&self) -> u32 {
        self.n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn build(v: Value, n: u32, modes: &[Mode]) -> Result<Classifier> {
        let map = v.as_object().unwrap().clone();
        let mut p = Params::new("q", &map, &["kind"]);
        let c = Classifier::from_params(&mut p, n, modes, |c, n| c.min(n - 1))?;
        p.finish("test")?;
        Ok(c)
    }

    #[test]
    fn flow_buckets_depend_on_the_salt_only_through_the_hash() {
        let mut rng = Rng::stream(1, "c");
        let mut pkt = Packet {
            hash: 12345,
            ..Packet::default()
        };
        let mut a = Classifier::flow(1024, 7);
        let b1 = a.classify(&pkt, &mut rng);
        assert_eq!(b1, a.classify(&pkt, &mut rng));
        assert!(b1 < 1024);
        // The same packet under many salts lands in many buckets.
        let mut seen = std::collections::BTreeSet::new();
        for s in 0..200 {
            seen.insert(Classifier::flow(1024, s).classify(&pkt, &mut rng));
        }
        assert!(seen.len() > 150, "{}", seen.len());
        // Distinct hashes spread over the buckets: 10 000 flows into 16 buckets.
        let mut counts = [0u32; 16];
        let mut c = Classifier::flow(16, 99);
        for h in 0..10_000 {
            pkt.hash = h;
            counts[c.classify(&pkt, &mut rng) as usize] += 1;
        }
        // Expected 625 each, binomial sd = sqrt(10000 * 1/16 * 15/16) = 24.2; 5 sd = 121.
        assert!(
            counts.iter().all(|&k| (504..=746).contains(&k)),
            "{counts:?}"
        );
    }

    #[test]
    fn class_and_tag_maps_extend_with_their_last_entry() {
        let mut rng = Rng::stream(1, "c");
        let mut c = build(
            json!({"classify": "class", "priomap": [2, 0, 1]}),
            3,
            &[Mode::Flow, Mode::Class, Mode::Tag],
        )
        .unwrap();
        let mut pkt = Packet::default();
        let got: Vec<u32> = [0u8, 1, 2, 3, 200]
            .iter()
            .map(|&cl| {
                pkt.class = cl;
                c.classify(&pkt, &mut rng)
            })
            .collect();
        assert_eq!(got, vec![2, 0, 1, 1, 1]);
        let mut t = build(
            json!({"classify": "tag"}),
            3,
            &[Mode::Flow, Mode::Class, Mode::Tag],
        )
        .unwrap();
        let got: Vec<u32> = [0u8, 1, 2, 3, 9]
            .iter()
            .map(|&ty| {
                pkt.tag.unit_type = ty;
                t.classify(&pkt, &mut rng)
            })
            .collect();
        assert_eq!(got, vec![0, 1, 2, 2, 2]);
    }

    #[test]
    fn bad_maps_and_misplaced_keys_name_their_path() {
        let all = [Mode::Flow, Mode::Class, Mode::Tag];
        let e = build(json!({"classify": "class", "priomap": [0, 5]}), 3, &all).unwrap_err();
        assert_eq!(e.path, "q.priomap[1]");
        assert!(e.message.contains("from 0 to 2"), "{e}");
        let e = build(json!({"priomap": [0]}), 3, &all).unwrap_err();
        assert_eq!(e.path, "q.priomap");
        assert!(e.message.contains("classify = \"class\""), "{e}");
        let e = build(json!({"classify": "class", "salt": 3}), 3, &all).unwrap_err();
        assert_eq!(e.path, "q.salt");
        let e = build(json!({"classify": "hash"}), 3, &all).unwrap_err();
        assert_eq!(e.path, "q.classify");
        // A flow-only scheduler does not know `classify` at all.
        let e = build(json!({"classify": "flow"}), 3, &[Mode::Flow]).unwrap_err();
        assert_eq!(e.path, "q.classify");
        assert!(e.message.contains("unknown parameter"), "{e}");
    }
}
