//! Scenario files: parsing, units, validation.
//!
//! A scenario arrives as TOML or JSON text (or a Python dict, passed as JSON), is read
//! into a `serde_json::Value`, and then into typed specs with `serde_path_to_error`, so
//! every error names its field path. Components with per-kind parameters (queue
//! disciplines, traffic) are read by `Params`, which rejects unknown keys.
pub mod bdp;
pub mod error;
pub mod params;
pub mod spec;
pub mod suggest;
pub mod units;

pub use error::{Result, ScenarioError};
pub use spec::ScenarioSpec;
