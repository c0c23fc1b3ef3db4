//! The C++ baseline: `cpp/perf.cu`, embedded, compiled with nvcc at run time
//! when nvcc is found (PATH, then /usr/local/cuda/bin), and run per shape.

use crate::scaling::Row;
use crate::timing::Result;
use std::path::{Path, PathBuf};
use std::process::Command;

const SOURCE: &str = include_str!("../cpp/perf.cu");

/// A compiled C++ benchmark, or why there is none.
#[derive(Debug)]
pub enum Cpp {
    Ready(PathBuf),
    Skipped(String),
}

impl Cpp {
    /// Compiles perf.cu for compute capability `major.minor`.
    pub fn build(major: i32, minor: i32) -> Cpp {
        let Some(nvcc) = find_nvcc() else {
            return Cpp::Skipped("skipped: no nvcc".into());
        };
        let dir = std::env::temp_dir().join(format!("graph-bench-cpp-{}", std::process::id()));
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return Cpp::Skipped(format!("skipped: {e}"));
        }
        let (source, binary) = (dir.join("perf.cu"), dir.join("perf"));
        if let Err(e) = std::fs::write(&source, SOURCE) {
            return Cpp::Skipped(format!("skipped: {e}"));
        }
        let arch = format!("-arch=sm_{major}{minor}");
        let output = Command::new(&nvcc)
            .args(["-O3", "-std=c++17", &arch, "-o"])
            .arg(&binary)
            .arg(&source)
            .output();
        match output {
            Ok(out) if out.status.success() => Cpp::Ready(binary),
            Ok(out) => Cpp::Skipped(format!(
                "skipped: nvcc failed: {}",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
            )),
            Err(e) => Cpp::Skipped(format!("skipped: running nvcc: {e}")),
        }
    }

    fn run(&self, args: &[String]) -> Result<Vec<f64>> {
        let Cpp::Ready(binary) = self else {
            return Err("no C++ binary".into());
        };
        let out = Command::new(binary).args(args).output()?;
        if !out.status.success() {
            return Err(format!(
                "perf {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(text
            .split_whitespace()
            .map(str::parse)
            .collect::<std::result::Result<_, _>>()?)
    }

    /// (graph row, streams host us, streams device us) for one shape.
    pub fn scaling(&self, width: usize, length: usize, reps: usize) -> Result<(Row, f64, f64)> {
        let v = self.run(&[
            "scaling".into(),
            width.to_string(),
            length.to_string(),
            reps.to_string(),
        ])?;
        let [build, instantiate, upload, first_launch, launch, device, stream, stream_device] =
            v[..]
        else {
            return Err(format!("unexpected output {v:?}").into());
        };
        Ok((
            Row {
                build,
                instantiate,
                upload,
                first_launch,
                launch,
                device,
            },
            stream,
            stream_device,
        ))
    }

    /// (device WHILE us, host loop us) for `steps` steps.
    pub fn loop_steps(&self, steps: usize, reps: usize) -> Result<(f64, f64)> {
        let v = self.run(&["loop".into(), steps.to_string(), reps.to_string()])?;
        match v[..] {
            [while_us, host_us] => Ok((while_us, host_us)),
            _ => Err(format!("unexpected output {v:?}").into()),
        }
    }

    pub fn skipped(&self) -> Option<&str> {
        match self {
            Cpp::Skipped(why) => Some(why),
            Cpp::Ready(_) => None,
        }
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
