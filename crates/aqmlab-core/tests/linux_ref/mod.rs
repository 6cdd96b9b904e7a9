//! Reference models of Linux queue disciplines, transcribed from the kernel sources
//! (each file cites its lines), and the trace harness that compares them with aqmlab.
#![allow(dead_code)]

pub mod dualpi2;
pub mod fq_codel;
pub mod pie;
pub mod trace;
