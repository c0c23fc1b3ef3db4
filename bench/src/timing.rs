//! Timing helpers: host clocks around synchronized work, device events, medians.

use graph_runtime::cudarc::driver::{sys, CudaContext, CudaEvent, CudaStream};
use std::sync::Arc;
use std::time::Instant;

pub type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

pub fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The median of `ratio(a[i], b[i])` over paired samples (measured back to
/// back, so that drift cancels out of each ratio).
pub fn paired_median<T>(a: &[T], b: &[T], ratio: impl Fn(&T, &T) -> f64) -> f64 {
    median(a.iter().zip(b).map(|(x, y)| ratio(x, y)).collect())
}

/// Microseconds `f` takes.
pub fn time_us<T>(f: impl FnOnce() -> Result<T>) -> Result<(f64, T)> {
    let start = Instant::now();
    let value = f()?;
    Ok((start.elapsed().as_secs_f64() * 1e6, value))
}

/// A pair of timing events on a stream.
#[derive(Debug)]
pub struct DeviceTimer {
    start: CudaEvent,
    end: CudaEvent,
}

impl DeviceTimer {
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        Ok(DeviceTimer {
            start: ctx.new_event(flags)?,
            end: ctx.new_event(flags)?,
        })
    }

    /// Host and device microseconds of `work` on `stream` (synchronized).
    pub fn time(&self, stream: &CudaStream, work: impl FnOnce() -> Result) -> Result<(f64, f64)> {
        let begin = Instant::now();
        self.start.record(stream)?;
        work()?;
        self.end.record(stream)?;
        stream.synchronize()?;
        let host = begin.elapsed().as_secs_f64() * 1e6;
        Ok((host, f64::from(self.start.elapsed_ms(&self.end)?) * 1e3))
    }
}
