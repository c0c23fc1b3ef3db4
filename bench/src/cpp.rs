//! The C++ baseline: `cpp/perf.cu`, embedded, compiled with nvcc at run time
//! when nvcc is found (PATH, then /usr/local/cuda/bin) into a shared library,
//! and loaded into this process. The C++ graphs then share the primary
//! context with the Rust ones, and each C++ measurement can be interleaved
//! with its Rust counterpart, so that drift of the machine cancels out of
//! the ratios.

use crate::scaling::Row;
use crate::timing::Result;
use libloading::Library;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::{Path, PathBuf};
use std::process::Command;

const SOURCE: &str = include_str!("../cpp/perf.cu");

/// The compiled C++ baseline, or why there is none.
#[derive(Debug)]
pub enum Cpp {
    Ready(CppLib),
    Skipped(String),
}

/// perf.cu loaded into this process.
#[derive(Debug)]
pub struct CppLib {
    library: Library,
}

impl Cpp {
    /// Compiles perf.cu for compute capability `major.minor` and loads it.
    pub fn build(major: i32, minor: i32) -> Cpp {
        match compile(major, minor) {
            Ok(lib) => Cpp::Ready(lib),
            Err(why) => Cpp::Skipped(why),
        }
    }

    pub fn ready(&self) -> Option<&CppLib> {
        match self {
            Cpp::Ready(lib) => Some(lib),
            Cpp::Skipped(_) => None,
        }
    }

    pub fn skipped(&self) -> Option<&str> {
        match self {
            Cpp::Skipped(why) => Some(why),
            Cpp::Ready(_) => None,
        }
    }
}

fn compile(major: i32, minor: i32) -> std::result::Result<CppLib, String> {
    let nvcc = find_nvcc().ok_or("skipped: no nvcc")?;
    let dir = std::env::temp_dir().join(format!("graph-bench-cpp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("skipped: {e}"))?;
    let (source, library) = (dir.join("perf.cu"), dir.join("libperf.so"));
    std::fs::write(&source, SOURCE).map_err(|e| format!("skipped: {e}"))?;
    let arch = format!("-arch=sm_{major}{minor}");
    let common = ["-O3", "-std=c++17", arch.as_str()];
    let shared = ["-shared", "-Xcompiler", "-fPIC"];
    let nvcc_run = |args: &[&str], out: &Path| -> std::result::Result<(), String> {
        let output = Command::new(&nvcc)
            .args(common)
            .args(args)
            .arg("-o")
            .arg(out)
            .arg(&source)
            .output()
            .map_err(|e| format!("skipped: running nvcc: {e}"))?;
        if output.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        Err(format!(
            "skipped: nvcc failed: {}",
            stderr.lines().next().unwrap_or("")
        ))
    };
    // The CUDA runtime linked statically, as nvcc does by default; if that
    // cannot go into a shared library here, dynamically.
    if let Err(why) = nvcc_run(&shared, &library) {
        let dynamic = ["-shared", "-Xcompiler", "-fPIC", "--cudart", "shared"];
        nvcc_run(&dynamic, &library).map_err(|again| format!("{why}; {again}"))?;
    }
    // SAFETY: our own library, just compiled; loading it runs only the CUDA
    // runtime's static initialisers.
    let library =
        unsafe { Library::new(&library) }.map_err(|e| format!("skipped: loading it: {e}"))?;
    Ok(CppLib { library })
}

type BuildFn = unsafe extern "C" fn(c_int, c_int, *const u64, *mut f64, *mut f64) -> c_int;
type ExecNewFn = unsafe extern "C" fn(c_int, c_int, *const u64, *mut *mut c_void) -> c_int;
type ExecTimeFn = unsafe extern "C" fn(*mut c_void, c_int, *mut f64) -> c_int;
type StreamsFn = unsafe extern "C" fn(c_int, c_int, *const u64, c_int, *mut f64) -> c_int;
type LoopNewFn = unsafe extern "C" fn(*mut c_int, *mut c_int, *mut *mut c_void) -> c_int;
type LoopRunFn = unsafe extern "C" fn(*mut c_void, c_int, *mut f64, *mut f64) -> c_int;
type LoopFreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type LastErrorFn = unsafe extern "C" fn() -> *const c_char;
type ExecLoopFn =
    unsafe extern "C" fn(*mut c_void, c_int, *const u64, c_int, c_int, f32, *mut f64) -> c_int;
type JacobiFn = unsafe extern "C" fn(
    c_int,
    u32,
    f32,
    u32,
    u64,
    u64,
    u64,
    u64,
    u64,
    f64,
    u32,
    *mut f64,
    *mut u32,
) -> c_int;

/// The device buffers of one Jacobi solve (device pointers), for [`CppLib::jacobi`].
#[derive(Debug, Clone, Copy)]
pub struct JacobiBuffers {
    pub u: u64,
    pub v: u64,
    pub f: u64,
    pub residual: u64,
    pub iterations: u64,
}

impl CppLib {
    /// The entry point `name` of perf.cu.
    ///
    /// # Safety
    /// `F` is the function type perf.cu defines for `name`.
    unsafe fn entry<F: Copy>(&self, name: &str) -> Result<F> {
        // SAFETY: forwarded from the caller.
        Ok(*unsafe { self.library.get::<F>(name.as_bytes()) }?)
    }

    /// Turns perf.cu's status into a Result, with its message on failure.
    fn status(&self, what: &str, status: c_int) -> Result {
        if status == 0 {
            return Ok(());
        }
        // SAFETY: perf_last_error is `const char* ()` in perf.cu and returns
        // a NUL-terminated static buffer.
        let message = unsafe {
            let last_error = self.entry::<LastErrorFn>("perf_last_error")?;
            CStr::from_ptr(last_error()).to_string_lossy().into_owned()
        };
        Err(format!("C++ {what}: {message}").into())
    }

    /// One build and one instantiation of the chains over `bufs` (device
    /// pointers, one per chain): (build us, instantiate us).
    pub fn build_once(&self, width: usize, length: usize, bufs: &[u64]) -> Result<(f64, f64)> {
        assert_eq!(bufs.len(), width);
        let (mut build, mut instantiate) = (0.0, 0.0);
        // SAFETY: perf_build has this signature; `bufs` holds `width` live
        // device pointers of 32 floats in the primary context.
        let status = unsafe {
            let f = self.entry::<BuildFn>("perf_build")?;
            f(
                width as c_int,
                length as c_int,
                bufs.as_ptr(),
                &mut build,
                &mut instantiate,
            )
        };
        self.status("build", status)?;
        Ok((build, instantiate))
    }

    /// An exec of the chains over `bufs` (device pointers, one per chain),
    /// with its own stream, to time with [`CppExec::time`].
    pub fn new_exec(&self, width: usize, length: usize, bufs: &[u64]) -> Result<CppExec<'_>> {
        assert_eq!(bufs.len(), width);
        let mut handle = std::ptr::null_mut();
        // SAFETY: perf_exec_new has this signature and writes the handle;
        // the buffers are as for `build_once` and outlive the exec (caller).
        let status = unsafe {
            let f = self.entry::<ExecNewFn>("perf_exec_new")?;
            f(width as c_int, length as c_int, bufs.as_ptr(), &mut handle)
        };
        self.status("exec", status)?;
        Ok(CppExec { lib: self, handle })
    }

    /// The chains' kernels on C++ streams (chain w on stream w): host and
    /// device us per round, medians of `reps` after 3 warm-ups. Each buffer
    /// receives `3 + reps` rounds of `length` increments.
    pub fn streams(&self, length: usize, bufs: &[u64], reps: usize) -> Result<(f64, f64)> {
        let mut out = [0.0f64; 2];
        // SAFETY: perf_streams has this signature and writes 2 doubles.
        let status = unsafe {
            let f = self.entry::<StreamsFn>("perf_streams")?;
            f(
                bufs.len() as c_int,
                length as c_int,
                bufs.as_ptr(),
                reps as c_int,
                out.as_mut_ptr(),
            )
        };
        self.status("streams", status)?;
        Ok((out[0], out[1]))
    }

    /// One Jacobi solve from zero (examples/jacobi.rs's algorithm with
    /// nvcc's kernels): the host loop, or the WHILE graph when
    /// `device_loop`. Built, instantiated and uploaded first; returns (us of
    /// the solve alone, steps taken).
    #[allow(clippy::too_many_arguments)]
    pub fn jacobi(
        &self,
        device_loop: bool,
        width: u32,
        h2: f32,
        len: u32,
        bufs: JacobiBuffers,
        tol2: f64,
        limit: u32,
    ) -> Result<(f64, u32)> {
        let (mut us, mut steps) = (0.0, 0u32);
        // SAFETY: perf_jacobi has this signature; the buffers are live device
        // memory of the primary context: u, v and f of `len` floats, residual
        // one double, iterations one unsigned (caller).
        let status = unsafe {
            let f = self.entry::<JacobiFn>("perf_jacobi")?;
            f(
                c_int::from(device_loop),
                width,
                h2,
                len,
                bufs.u,
                bufs.v,
                bufs.f,
                bufs.residual,
                bufs.iterations,
                tol2,
                limit,
                &mut us,
                &mut steps,
            )
        };
        self.status("jacobi", status)?;
        Ok((us, steps))
    }

    /// C++'s WHILE and host loop over the Rust side's `counter` and `flag`
    /// (device pointers to one int each).
    pub fn new_loop(&self, counter: u64, flag: u64) -> Result<CppLoop<'_>> {
        let mut handle = std::ptr::null_mut();
        // SAFETY: perf_loop_new has this signature; both pointers are live
        // device ints that outlive the loop (caller).
        let status = unsafe {
            let f = self.entry::<LoopNewFn>("perf_loop_new")?;
            f(counter as *mut c_int, flag as *mut c_int, &mut handle)
        };
        self.status("loop setup", status)?;
        Ok(CppLoop { lib: self, handle })
    }
}

/// C++'s loop workload, freed on drop.
#[derive(Debug)]
pub struct CppLoop<'l> {
    lib: &'l CppLib,
    handle: *mut c_void,
}

impl CppLoop<'_> {
    /// One run of each loop: (WHILE us, host loop us) for `steps` steps.
    pub fn run(&mut self, steps: i32) -> Result<(f64, f64)> {
        let (mut while_us, mut host_us) = (0.0, 0.0);
        // SAFETY: perf_loop_run has this signature; the handle is live.
        let status = unsafe {
            let f = self.lib.entry::<LoopRunFn>("perf_loop_run")?;
            f(self.handle, steps, &mut while_us, &mut host_us)
        };
        self.lib.status("loop", status)?;
        Ok((while_us, host_us))
    }
}

impl Drop for CppLoop<'_> {
    fn drop(&mut self) {
        // SAFETY: perf_loop_free has this signature; the handle is freed once.
        // A failure to destroy the benchmark's graphs is not worth a panic.
        let _ = unsafe {
            self.lib
                .entry::<LoopFreeFn>("perf_loop_free")
                .map(|f| f(self.handle))
        };
    }
}

/// A C++ exec of the chains (see [`CppLib::new_exec`]), destroyed on drop.
#[derive(Debug)]
pub struct CppExec<'l> {
    lib: &'l CppLib,
    handle: *mut c_void,
}

impl CppExec<'_> {
    /// Upload, first launch, then the medians of `reps` launches after 3
    /// warm-ups: a row without build numbers. Each buffer receives
    /// `4 + reps` rounds.
    pub fn time(&mut self, reps: usize) -> Result<Row> {
        let mut out = [0.0f64; 4];
        // SAFETY: perf_exec_time has this signature and writes 4 doubles;
        // the handle is live.
        let status = unsafe {
            let f = self.lib.entry::<ExecTimeFn>("perf_exec_time")?;
            f(self.handle, reps as c_int, out.as_mut_ptr())
        };
        self.lib.status("exec time", status)?;
        let [upload, first_launch, launch, device] = out;
        Ok(Row {
            upload,
            first_launch,
            launch,
            device,
            ..Row::UNMEASURED
        })
    }
}

impl CppExec<'_> {
    /// The launch loop over an exec of width x 1 chains (see perf.cu's
    /// `perf_exec_loop`): us of each of `iters` iterations. mode 0: launch
    /// and read back; 1: with a per-node update; 2: with a rebuild and a
    /// whole-graph update. `start` is the value of `bufs[0][0]` before.
    pub fn launch_loop(
        &mut self,
        bufs: &[u64],
        mode: u32,
        iters: usize,
        start: f32,
    ) -> Result<Vec<f64>> {
        let mut us = vec![0.0f64; iters];
        // SAFETY: perf_exec_loop has this signature and writes `iters`
        // doubles; the handle is live and `bufs` are the exec's buffers.
        let status = unsafe {
            let f = self.lib.entry::<ExecLoopFn>("perf_exec_loop")?;
            f(
                self.handle,
                bufs.len() as c_int,
                bufs.as_ptr(),
                mode as c_int,
                iters as c_int,
                start,
                us.as_mut_ptr(),
            )
        };
        self.lib.status("launch loop", status)?;
        Ok(us)
    }
}

impl Drop for CppExec<'_> {
    fn drop(&mut self) {
        // SAFETY: perf_exec_free has this signature; the handle is freed once.
        // A failure to destroy the benchmark's graphs is not worth a panic.
        let _ = unsafe {
            self.lib
                .entry::<LoopFreeFn>("perf_exec_free")
                .map(|f| f(self.handle))
        };
    }
}

fn find_nvcc() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("nvcc"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        ["/usr/local/cuda/bin/nvcc"]
            .iter()
            .map(Path::new)
            .find(|p| p.is_file())
            .map(Path::to_path_buf)
    })
}
