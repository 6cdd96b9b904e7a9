//! aqmlab-core: a packet-level simulator for Active Queue Management and packet
//! scheduling at the bottleneck of access networks.
//!
//! Entry points: [`run_scenario`] for a whole run, or [`engine::Simulation`] to run in
//! steps (progress bars) and collect [`results::Results`].

pub mod app;
#[cfg(target_os = "linux")]
pub mod emulate;
pub mod engine;
pub mod measure;
pub mod net;
pub mod output;
pub mod pep;
pub mod qdisc;
pub mod results;
pub mod scenario;
pub mod sim;
pub mod transport;

pub use engine::{RunOptions, Simulation};
pub use results::Results;
pub use scenario::{ScenarioError, ScenarioSpec};

/// Build and run `spec` with `seed` (None: the scenario's own), returning its tables.
pub fn run_scenario(
    spec: &ScenarioSpec,
    seed: Option<u64>,
    opts: &RunOptions,
) -> Result<Results, RunError> {
    let mut sim = Simulation::new(spec, seed, opts)?;
    sim.run().map_err(RunError::Stopped)?;
    sim.flush_outputs().map_err(RunError::Io)?;
    Ok(results::collect(&sim))
}

/// Why a run failed.
#[derive(Debug)]
pub enum RunError {
    Scenario(ScenarioError),
    Io(std::io::Error),
    /// The run stopped early (time not advancing, memory).
    Stopped(engine::RunFailure),
}

impl From<ScenarioError> for RunError {
    fn from(e: ScenarioError) -> Self {
        RunError::Scenario(e)
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Scenario(e) => write!(f, "{e}"),
            RunError::Io(e) => write!(f, "I/O error: {e}"),
            RunError::Stopped(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RunError {}
