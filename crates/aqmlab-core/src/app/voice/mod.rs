//! Voice: VoIP calls (`voip.rs`) with their playout buffer (`playout.rs`) and the
//! ITU-T G.107 E-model that scores them (`emodel.rs`); the calls' RTP/RTCP is `rtp/`.

pub mod emodel;
pub mod playout;
pub mod voip;
