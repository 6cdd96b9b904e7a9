//! Video frame traces: the frames (type, size) a trace-driven `video` source sends.
//!
//! Two formats:
//! - **Evalvid** sender trace, as Evalvid's `mp4trace` writes it (Klaue, Rathke, Wolisz,
//!   "EvalVid — A Framework for Video Transmission and Quality Evaluation", TOOLS 2003;
//!   the myEvalvid ns-2 port reads the same file): one frame per line, whitespace
//!   separated — frame number, frame type (`I`, `P`, `B`, or `H` for the stream header,
//!   which counts as an intra frame here), frame size in bytes, number of packets, send
//!   time (`segm at 33 ms` or a number). Only the first three fields are used: the
//!   simulator fragments frames itself (`packet_size`) and sends at `fps`.
//! - **CSV** with a header line naming at least `type` and `size` (`frame` optional,
//!   other columns ignored), comma separated.
//!
//! Blank lines and lines starting with `#` are skipped. Every error names the file,
//! the line (1-based) and the field.

use super::frame::FrameType;

/// One frame of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceFrame {
    pub ty: FrameType,
    /// Bytes of coded picture (payload, without packet headers).
    pub size: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Evalvid,
    Csv,
}

/// A trace error: line (1-based), field name, what was wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceError {
    pub line: usize,
    pub field: &'static str,
    pub message: String,
}

impl TraceError {
    fn new(line: usize, field: &'static str, message: impl Into<String>) -> Self {
        TraceError {
            line,
            field,
            message: message.into(),
        }
    }

    /// `FILE, line N, field F: message`.
    pub fn describe(&self, file: &str) -> String {
        format!(
            "{file}, line {}, field `{}`: {}",
            self.line, self.field, self.message
        )
    }
}

fn frame_type(s: &str, line: usize) -> Result<FrameType, TraceError> {
    match s.trim() {
        "I" | "i" | "H" | "h" => Ok(FrameType::I),
        "P" | "p" => Ok(FrameType::P),
        "B" | "b" => Ok(FrameType::B),
        other => Err(TraceError::new(
            line,
            "type",
            format!("\"{other}\": unknown frame type; expected I, P, B (or H, a header)"),
        )),
    }
}

fn frame_size(s: &str, line: usize) -> Result<u32, TraceError> {
    let s = s.trim();
    match s.parse::<i64>() {
        Ok(v) if v < 0 => Err(TraceError::new(
            line,
            "size",
            format!("{v}: negative size; expected bytes ≥ 1"),
        )),
        Ok(0) => Err(TraceError::new(line, "size", "0: expected bytes ≥ 1")),
        Ok(v) if v > u32::MAX as i64 => Err(TraceError::new(
            line,
            "size",
            format!("{v}: too large a frame"),
        )),
        Ok(v) => Ok(v as u32),
        Err(_) => Err(TraceError::new(
            line,
            "size",
            format!("\"{s}\": expected a whole number of bytes"),
        )),
    }
}

fn frame_number(s: &str, line: usize) -> Result<(), TraceError> {
    s.trim().parse::<u64>().map(|_| ()).map_err(|_| {
        TraceError::new(
            line,
            "frame",
            format!("\"{}\": expected a frame number ≥ 0", s.trim()),
        )
    })
}

/// Lines that carry data: (1-based line number, text).
fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// Parse a trace; at least one frame.
pub fn parse(text: &str, format: Format) -> Result<Vec<TraceFrame>, TraceError> {
    let frames = match format {
        Format::Evalvid => parse_evalvid(text)?,
        Format::Csv => parse_csv(text)?,
    };
    if frames.is_empty() {
        return Err(TraceError::new(0, "frame", "no frames in the trace"));
    }
    Ok(frames)
}

fn parse_evalvid(text: &str) -> Result<Vec<TraceFrame>, TraceError> {
    let mut out = Vec::new();
    for (n, l) in data_lines(text) {
        let mut f = l.split_whitespace();
        let num = f
            .next()
            .ok_or_else(|| TraceError::new(n, "frame", "missing"))?;
        frame_number(num, n)?;
        let ty = f
            .next()
            .ok_or_else(|| TraceError::new(n, "type", "missing: expected I, P or B"))?;
        let ty = frame_type(ty, n)?;
        let size = f.next().ok_or_else(|| {
            TraceError::new(n, "size", "missing: expected the frame size in bytes")
        })?;
        let size = frame_size(size, n)?;
        out.push(TraceFrame { ty, size });
    }
    Ok(out)
}

fn parse_csv(text: &str) -> Result<Vec<TraceFrame>, TraceError> {
    let mut lines = data_lines(text);
    let Some((hn, header)) = lines.next() else {
        return Ok(Vec::new());
    };
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let col = |name: &'static str| {
        names.iter().position(|c| *c == name).ok_or_else(|| {
            TraceError::new(
                hn,
                name,
                format!(
                    "missing column `{name}` in the header {names:?}; expected frame,type,size"
                ),
            )
        })
    };
    let (ct, cs) = (col("type")?, col("size")?);
    let cf = names.iter().position(|c| *c == "frame");
    let mut out = Vec::new();
    for (n, l) in lines {
        let cells: Vec<&str> = l.split(',').collect();
        let get = |i: usize, name: &'static str| {
            cells.get(i).copied().ok_or_else(|| {
                TraceError::new(
                    n,
                    name,
                    format!("missing: the line has {} fields", cells.len()),
                )
            })
        };
        if let Some(i) = cf {
            frame_number(get(i, "frame")?, n)?;
        }
        let ty = frame_type(get(ct, "type")?, n)?;
        let size = frame_size(get(cs, "size")?, n)?;
        out.push(TraceFrame { ty, size });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evalvid_lines_parse() {
        let t = "# foreman\n1\tH\t29\t1\tsegm at 33 ms\n2\tI\t3036\t4\tsegm at 66 ms\n\n3 P 512 1 segm at 100 ms\n4 B 100 1 0.133\n";
        let f = parse(t, Format::Evalvid).unwrap();
        let want = [
            (FrameType::I, 29),
            (FrameType::I, 3036),
            (FrameType::P, 512),
            (FrameType::B, 100),
        ];
        assert_eq!(f, want.map(|(ty, size)| TraceFrame { ty, size }).to_vec());
    }

    #[test]
    fn csv_reads_columns_by_name() {
        let t = "size,frame,type,extra\n100,0,I,x\n20,1,B,y\n";
        let f = parse(t, Format::Csv).unwrap();
        assert_eq!(
            f[0],
            TraceFrame {
                ty: FrameType::I,
                size: 100
            }
        );
        assert_eq!(
            f[1],
            TraceFrame {
                ty: FrameType::B,
                size: 20
            }
        );
    }

    #[test]
    fn errors_name_line_and_field() {
        let cases: &[(&str, Format, usize, &str, &str)] = &[
            ("1 I 100\n2 P -5\n", Format::Evalvid, 2, "size", "negative"),
            (
                "1 I 100\n\n2 X 5\n",
                Format::Evalvid,
                3,
                "type",
                "unknown frame type",
            ),
            ("1 I 100\n2 P\n", Format::Evalvid, 2, "size", "missing"),
            (
                "1 I 100\nx P 3\n",
                Format::Evalvid,
                2,
                "frame",
                "frame number",
            ),
            ("1 I ten\n", Format::Evalvid, 1, "size", "whole number"),
            (
                "frame,size\n0,100\n",
                Format::Csv,
                1,
                "type",
                "missing column `type`",
            ),
            (
                "frame,type,size\n0,I,100\n1,P\n",
                Format::Csv,
                3,
                "size",
                "missing",
            ),
            ("type,size\nI,-1\n", Format::Csv, 2, "size", "negative"),
            ("", Format::Evalvid, 0, "frame", "no frames"),
        ];
        for (text, fmt, line, field, msg) in cases {
            let e = parse(text, *fmt).unwrap_err();
            assert_eq!((e.line, e.field), (*line, *field), "{text:?}: {e:?}");
            assert!(e.message.contains(msg), "{text:?}: {e:?}");
        }
        let e = parse("1 I 100\n2 P -5\n", Format::Evalvid).unwrap_err();
        assert_eq!(
            e.describe("st_foreman.txt"),
            "st_foreman.txt, line 2, field `size`: -5: negative size; expected bytes ≥ 1"
        );
    }
}
