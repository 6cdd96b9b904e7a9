//! PSNR of a received stream without decoding: the "fast model" of Evalvid-style
//! evaluation (`decode.rs`), and the Evalvid PSNR → MOS table.
//!
//! A lost or undecodable frame is shown as the last decodable frame (freeze). So the
//! PSNR of output frame n depends only on its clip frame `i = n mod L` and on the gap
//! `d = n − m` to the last decodable frame m ≤ n: `psnr[i][d]` = PSNR of original frame
//! i against the *decoded* (lossless-transmission) frame `(i − d) mod L`. The table is
//! computed once per clip by `aqmlab.video` (Python, PyAV) and read here from a CSV with
//! columns `frame,gap,psnr_db`: gaps 0..=D, and gap −1 for "nothing decoded yet"
//! (original against a mid-grey picture). Gaps beyond D use D's value (a documented
//! approximation: D is chosen when the table is made; it should cover the longest
//! freeze of interest, e.g. a GOP or two). Frames are in display order (a trace with B
//! frames in decode order is not supported by the model mode).
//!
//! PSNR is on luminance, `20·log10(255/√MSE)`, capped at 100 dB for identical
//! pictures (the cap is in the table). MOS per frame (Evalvid `mos`): > 37 → 5,
//! > 31 → 4, > 25 → 3, > 20 → 2, else 1; `video_mos` is the mean over frames.

/// Per-frame PSNR by clip frame and freeze gap.
#[derive(Clone, Debug, PartialEq)]
pub struct PsnrModel {
    /// Clip length L.
    pub frames: usize,
    /// Largest gap D.
    pub max_gap: usize,
    /// `values[i·(D+2) + gap + 1]`.
    values: Vec<f64>,
}

/// Evalvid's PSNR → MOS mapping.
pub fn mos(psnr_db: f64) -> u8 {
    if psnr_db > 37.0 {
        5
    } else if psnr_db > 31.0 {
        4
    } else if psnr_db > 25.0 {
        3
    } else if psnr_db > 20.0 {
        2
    } else {
        1
    }
}

impl PsnrModel {
    /// Parse the CSV; errors name the line and field (the caller adds the file).
    pub fn parse(text: &str) -> Result<PsnrModel, (usize, &'static str, String)> {
        let mut rows: Vec<(usize, i64, f64)> = Vec::new();
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
        let Some((hn, header)) = lines.next() else {
            return Err((0, "frame", "empty model file".into()));
        };
        let names: Vec<&str> = header.split(',').map(str::trim).collect();
        let col = |n: &'static str| {
            names.iter().position(|c| *c == n).ok_or((
                hn,
                n,
                format!("missing column `{n}`; expected frame,gap,psnr_db"),
            ))
        };
        let (cf, cg, cp) = (col("frame")?, col("gap")?, col("psnr_db")?);
        for (n, l) in lines {
            let cells: Vec<&str> = l.split(',').map(str::trim).collect();
            let cell = |i: usize, f: &'static str| {
                cells.get(i).copied().ok_or((n, f, "missing".to_string()))
            };
            let frame = cell(cf, "frame")?
                .parse::<usize>()
                .map_err(|_| (n, "frame", "expected a frame index ≥ 0".to_string()))?;
            let gap = cell(cg, "gap")?
                .parse::<i64>()
                .ok()
                .filter(|g| *g >= -1)
                .ok_or((n, "gap", "expected a gap ≥ −1".to_string()))?;
            let psnr = cell(cp, "psnr_db")?
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or((n, "psnr_db", "expected a finite number of dB".to_string()))?;
            rows.push((frame, gap, psnr));
        }
        let frames = rows.iter().map(|r| r.0 + 1).max().unwrap_or(0);
        let max_gap = rows.iter().map(|r| r.1).max().unwrap_or(-1);
        if frames == 0 || max_gap < 0 {
            return Err((
                0,
                "gap",
                "the model needs gaps -1..D for every frame".into(),
            ));
        }
        let width = max_gap as usize + 2;
        // One row per (frame, gap), checked before allocating, so that a stray huge
        // frame index or gap is an error naming a missing row, not a table of billions
        // of cells. The first missing pair is among the first rows.len() + 1 expected.
        if frames.checked_mul(width) != Some(rows.len()) {
            let have: std::collections::BTreeSet<(usize, i64)> =
                rows.iter().map(|r| (r.0, r.1)).collect();
            if have.len() < rows.len() {
                let mut seen = std::collections::BTreeSet::new();
                let d = rows.iter().find(|r| !seen.insert((r.0, r.1))).unwrap();
                return Err((0, "gap", format!("two rows for frame {}, gap {}", d.0, d.1)));
            }
            let missing = (0..frames)
                .flat_map(|f| (-1..=max_gap).map(move |g| (f, g)))
                .find(|k| !have.contains(k))
                .unwrap();
            return Err((
                0,
                "gap",
                format!("no row for frame {}, gap {}", missing.0, missing.1),
            ));
        }
        let mut values = vec![f64::NAN; frames * width];
        for (f, g, v) in rows {
            values[f * width + (g + 1) as usize] = v;
        }
        if let Some(k) = values.iter().position(|v| v.is_nan()) {
            return Err((
                0,
                "gap",
                format!(
                    "no row for frame {}, gap {}",
                    k / width,
                    (k % width) as i64 - 1
                ),
            ));
        }
        Ok(PsnrModel {
            frames,
            max_gap: max_gap as usize,
            values,
        })
    }

    /// PSNR of output frame `n` when the last decodable frame is `last` (≤ n).
    pub fn psnr(&self, n: u64, last: Option<u64>) -> f64 {
        let i = (n % self.frames as u64) as usize;
        let w = self.max_gap + 2;
        let g = match last {
            None => 0,
            Some(m) => ((n - m) as usize).min(self.max_gap) + 1,
        };
        self.values[i * w + g]
    }

    /// Per-frame PSNR of a decodability pattern (frame n of the stream is `dec[n]`).
    pub fn apply(&self, dec: &[bool], out: &mut Vec<f64>) {
        out.clear();
        let mut last = None;
        for (n, &d) in dec.iter().enumerate() {
            if d {
                last = Some(n as u64);
            }
            out.push(self.psnr(n as u64, last));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3-frame clip, gaps up to 1: row (frame, gap) = 10·frame + gap + 40 dB.
    fn model() -> PsnrModel {
        let mut t = String::from("frame,gap,psnr_db\n");
        for f in 0..3 {
            for g in -1..=1 {
                t.push_str(&format!("{f},{g},{}\n", 10 * f + g + 40));
            }
        }
        PsnrModel::parse(&t).unwrap()
    }

    #[test]
    fn freeze_gaps_and_looping() {
        let m = model();
        let mut out = Vec::new();
        // Stream frames 0..6 (the clip twice): 1 lost, 3 4 5 lost.
        m.apply(&[true, false, true, false, false, false], &mut out);
        // n=0 i=0 d=0 → 40; n=1 i=1 d=1 → 51; n=2 i=2 d=0 → 60; n=3 i=0 d=1 → 41;
        // n=4 i=1 d=2 → capped at 1 → 51; n=5 i=2 d=3 → 61.
        assert_eq!(out, vec![40.0, 51.0, 60.0, 41.0, 51.0, 61.0]);
        // Nothing decoded yet: gap −1.
        m.apply(&[false, true], &mut out);
        assert_eq!(out, vec![39.0, 50.0]);
    }

    #[test]
    fn mos_table_boundaries() {
        let got: Vec<u8> = [38.0, 37.0, 31.5, 31.0, 25.1, 25.0, 20.5, 20.0, 5.0]
            .iter()
            .map(|&p| mos(p))
            .collect();
        assert_eq!(got, vec![5, 4, 4, 3, 3, 2, 2, 1, 1]);
    }

    #[test]
    fn bad_model_rows_name_line_and_field() {
        let e = PsnrModel::parse("frame,gap,psnr_db\n0,-1,30\n0,0,x\n").unwrap_err();
        assert_eq!((e.0, e.1), (3, "psnr_db"));
        let e = PsnrModel::parse("frame,psnr_db\n").unwrap_err();
        assert_eq!((e.0, e.1), (1, "gap"));
        let e = PsnrModel::parse("frame,gap,psnr_db\n0,-1,30\n1,0,3\n1,-1,3\n").unwrap_err();
        assert!(e.2.contains("frame 0, gap 0"), "{e:?}");
    }

    #[test]
    fn a_huge_gap_or_frame_index_is_an_error_not_an_allocation() {
        // The round-3 fuzz findings: a gap of 9e18 overflowed the capacity, a frame
        // index of 1e5 with a gap of 1e4 aborted the process.
        for text in [
            "frame,gap,psnr_db\n0,-1,30\n0,9000000000000000000,30\n",
            "frame,gap,psnr_db\n0,-1,30\n100000,10000,30\n",
        ] {
            let e = PsnrModel::parse(text).unwrap_err();
            assert!(e.2.contains("no row for frame 0, gap 0"), "{e:?}");
        }
    }
}
