//! MPEG picture types (MPEG-1, ISO/IEC 11172-2: I pictures coded alone, P predicted
//! from the previous I/P, B from the previous and next I/P), shared by the frame sources
//! (`source.rs`), traces (`trace.rs`), decodability (`decode.rs`) and scaling.

/// MPEG picture types; the value is the app tag's unit type (1 = I, 2 = P, 3 = B).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameType {
    I = 1,
    P = 2,
    B = 3,
}

impl FrameType {
    pub fn tag(self) -> u8 {
        self as u8
    }

    pub fn letter(self) -> &'static str {
        match self {
            FrameType::I => "I",
            FrameType::P => "P",
            FrameType::B => "B",
        }
    }

    /// I and P pictures are references for later pictures.
    pub fn is_reference(self) -> bool {
        self != FrameType::B
    }

    pub fn from_letter(c: char) -> Option<FrameType> {
        match c {
            'I' => Some(FrameType::I),
            'P' => Some(FrameType::P),
            'B' => Some(FrameType::B),
            _ => None,
        }
    }
}
