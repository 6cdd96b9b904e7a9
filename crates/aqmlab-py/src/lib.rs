//! PyO3 bindings: a thin skin over `aqmlab-core`, no simulation logic here.
//!
//! Every entry point releases the GIL while the core works and turns a Rust panic into
//! a Python `SimulationError` (via `catch_unwind`), so a bug in the core can never take
//! the Python process down.

use aqmlab_core::output::table::{Column, Table};
use aqmlab_core::scenario::params::KindDoc;
use aqmlab_core::{RunOptions, ScenarioSpec, Simulation as CoreSimulation};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

/// Raise `aqmlab.errors.NAME(*args)`: the exception classes live in Python so that they
/// carry attributes (`path`, `message`) and one class serves Rust and Python code alike.
fn python_error(name: &str, args: (String, Option<String>)) -> PyErr {
    Python::attach(|py| {
        let made = py
            .import("aqmlab.errors")
            .and_then(|m| m.getattr(name))
            .and_then(|cls| match args {
                (path, Some(msg)) => cls.call1((path, msg)),
                (msg, None) => cls.call1((msg,)),
            });
        match made {
            Ok(exc) => PyErr::from_value(exc),
            Err(e) => e,
        }
    })
}

fn scenario_error(e: aqmlab_core::ScenarioError) -> PyErr {
    python_error("ScenarioError", (e.path, Some(e.message)))
}

fn simulation_error(msg: String) -> PyErr {
    python_error("SimulationError", (msg, None))
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

/// Run `f` without the GIL, converting a panic into `SimulationError`.
fn guarded<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(f)))
        .map_err(|p| {
            simulation_error(format!(
                "internal error in the simulator core: {}",
                panic_message(p)
            ))
        })
}

fn parse(json: &str) -> PyResult<ScenarioSpec> {
    ScenarioSpec::from_json_str(json).map_err(scenario_error)
}

/// Check a scenario (JSON text); raises `ScenarioError`. Returns its warnings
/// (allowed, probably not meant: `qdisc::target_check`).
#[pyfunction]
fn validate(py: Python<'_>, json: &str) -> PyResult<Vec<String>> {
    let spec = guarded(py, || ScenarioSpec::from_json_str(json))?.map_err(scenario_error)?;
    // Building checks cross-references (nodes, links, qdisc and traffic parameters).
    let built = guarded(py, || {
        CoreSimulation::new(&spec, None, &RunOptions::default()).map(|s| s.warnings.clone())
    })?;
    match built {
        Ok(w) => Ok(w),
        // A pcap request without an output directory is not a scenario fault.
        Err(e) if e.path == "output.pcap" && e.message.contains("output directory") => {
            Ok(Vec::new())
        }
        Err(e) => Err(scenario_error(e)),
    }
}

/// A numeric column as one `bytes` object of its values in native byte order (8 bytes
/// per f64/u64/i64, one byte 0/1 per bool): Python views it with `memoryview.cast` or
/// `numpy.frombuffer` instead of receiving one Python object per value (issue 34: table
/// building was a visible share of a short run). One copy, no per-value allocation.
fn column_bytes<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    values: &[T],
    to_bytes: impl Fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = PyBytes::new_with(py, values.len() * N, |buf| {
        for (chunk, &v) in buf.chunks_exact_mut(N).zip(values) {
            chunk.copy_from_slice(&to_bytes(v));
        }
        Ok(())
    })?;
    Ok(bytes.into_any())
}

/// A string column as `(distinct, codes)`: its distinct strings in order of first
/// appearance and, per row, the `u32` index of its string (`column_bytes`). Table
/// strings repeat (link, app and reason names over thousands of rows): Python makes one
/// `str` per distinct value instead of one per row.
fn str_column<'py>(py: Python<'py>, values: &[String]) -> PyResult<Bound<'py, PyAny>> {
    if u32::try_from(values.len()).is_err() {
        return Err(simulation_error(format!(
            "a string column of {} rows: more than a u32 index can address",
            values.len()
        )));
    }
    let mut index: HashMap<&str, u32> = HashMap::new();
    let mut distinct: Vec<&str> = Vec::new();
    let codes: Vec<u32> = values
        .iter()
        .map(|s| {
            *index.entry(s.as_str()).or_insert_with(|| {
                distinct.push(s);
                (distinct.len() - 1) as u32 // < values.len(), checked above
            })
        })
        .collect();
    let codes = column_bytes(py, &codes, u32::to_ne_bytes)?;
    Ok((PyList::new(py, distinct)?, codes)
        .into_pyobject(py)?
        .into_any())
}

/// A table as `[(column, dtype, values)]`: numeric columns as `bytes` (`column_bytes`),
/// string columns as `(distinct strings, codes)` (`str_column`).
fn table_to_py<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyList>> {
    let cols = PyList::empty(py);
    for (name, col) in &t.columns {
        let (ty, values): (&str, Bound<'py, PyAny>) = match col {
            Column::F64(v) => ("f64", column_bytes(py, v, f64::to_ne_bytes)?),
            Column::U64(v) => ("u64", column_bytes(py, v, u64::to_ne_bytes)?),
            Column::I64(v) => ("i64", column_bytes(py, v, i64::to_ne_bytes)?),
            Column::Bool(v) => ("bool", column_bytes(py, v, |b| [u8::from(b)])?),
            Column::Str(v) => ("str", str_column(py, v)?),
        };
        cols.append((name.as_str(), ty, values))?;
    }
    Ok(cols)
}

/// One simulation, run in steps so Python can show progress.
#[pyclass(module = "aqmlab._core")]
struct Simulation {
    inner: CoreSimulation,
    finished: bool,
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (json, seed=None, out_dir=None))]
    fn new(
        py: Python<'_>,
        json: &str,
        seed: Option<u64>,
        out_dir: Option<PathBuf>,
    ) -> PyResult<Self> {
        let spec = parse(json)?;
        let opts = RunOptions { out_dir };
        let inner =
            guarded(py, || CoreSimulation::new(&spec, seed, &opts))?.map_err(scenario_error)?;
        Ok(Simulation {
            inner,
            finished: false,
        })
    }

    /// Simulate up to `t_ns` (capped at the end).
    fn run_until(&mut self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        let sim = &mut self.inner;
        guarded(py, || sim.run_until(t_ns))?.map_err(|e| simulation_error(e.to_string()))
    }

    /// Simulate to the end.
    fn run(&mut self, py: Python<'_>) -> PyResult<()> {
        let sim = &mut self.inner;
        guarded(py, || sim.run())?.map_err(|e| simulation_error(e.to_string()))
    }

    #[getter]
    fn end_ns(&self) -> u64 {
        self.inner.end
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.inner.now()
    }

    #[getter]
    fn done(&self) -> bool {
        self.inner.is_done()
    }

    #[getter]
    fn pcap_files(&self) -> Vec<String> {
        self.inner
            .pcap_files
            .iter()
            .map(|p| p.display().to_string())
            .collect()
    }

    /// The result tables: `[(name, [(column, dtype, values), ...]), ...]` (`table_to_py`).
    fn results<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let sim = &mut self.inner;
        if !self.finished {
            guarded(py, || sim.flush_outputs())?
                .map_err(|e| simulation_error(format!("writing outputs: {e}")))?;
            self.finished = true;
        }
        let res = guarded(py, || aqmlab_core::results::collect(sim))?;
        let out = PyList::empty(py);
        for t in &res.tables {
            out.append((t.name.as_str(), table_to_py(py, t)?))?;
        }
        Ok(out)
    }
}

fn docs_to_py<'py>(py: Python<'py>, kinds: &[KindDoc]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for k in kinds {
        let d = PyDict::new(py);
        d.set_item("kind", k.kind)?;
        d.set_item("summary", k.summary)?;
        d.set_item("source", k.source)?;
        let ps = PyList::empty(py);
        for p in k.params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("type", p.ty)?;
            pd.set_item("default", p.default)?;
            pd.set_item("doc", p.doc)?;
            ps.append(pd)?;
        }
        d.set_item("params", ps)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Every queue discipline with its parameters.
#[pyfunction]
fn qdiscs(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    docs_to_py(py, &aqmlab_core::qdisc::kinds())
}

/// Every TCP congestion control with its parameters.
#[pyfunction]
fn congestion_controls(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    docs_to_py(py, &aqmlab_core::transport::tcp::cc::kinds())
}

/// Every traffic kind with its parameters (plus `common`: keys every kind takes).
#[pyfunction]
fn traffic_kinds(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let mut kinds = aqmlab_core::app::kinds();
    kinds.push(KindDoc {
        kind: "common",
        summary: "keys every traffic kind takes",
        source: "-",
        params: aqmlab_core::app::common_params(),
    });
    docs_to_py(py, &kinds)
}

/// Run the emulator (`aqmlab_core::emulate::run`) on stdin (control) and stdout
/// (`ready`); returns its report as JSON text. Meant for the `aqmlab.emulate.pump`
/// process, which the Python side starts and stops.
#[cfg(target_os = "linux")]
#[pyfunction]
fn emulate(py: Python<'_>, scenario_json: &str, config_json: &str) -> PyResult<String> {
    let spec = parse(scenario_json)?;
    let cfg =
        aqmlab_core::emulate::EmuConfig::from_json_str(config_json).map_err(scenario_error)?;
    match guarded(py, || aqmlab_core::emulate::run(&spec, &cfg, 0, 1))? {
        Ok(v) => Ok(v.to_string()),
        Err(aqmlab_core::emulate::EmuError::Scenario(e)) => Err(scenario_error(e)),
        Err(e) => Err(simulation_error(format!("emulator: {e}"))),
    }
}

/// Test hook: panic inside the core, to prove a panic becomes a Python exception.
/// Only in builds with the `test-hooks` feature (the Makefile's), not in wheels.
#[cfg(feature = "test-hooks")]
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    guarded(py, || panic!("deliberate panic (test hook)"))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // See build.rs: the hash of the compiled sources and the git commit of the build.
    m.add("source_hash", env!("AQMLAB_SOURCE_HASH"))?;
    m.add("git_describe", env!("AQMLAB_GIT_DESCRIBE"))?;
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(qdiscs, m)?)?;
    m.add_function(wrap_pyfunction!(congestion_controls, m)?)?;
    m.add_function(wrap_pyfunction!(traffic_kinds, m)?)?;
    #[cfg(target_os = "linux")]
    m.add_function(wrap_pyfunction!(emulate, m)?)?;
    #[cfg(feature = "test-hooks")]
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    Ok(())
}
