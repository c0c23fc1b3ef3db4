//! GPU tests of the runtime: every node kind, conditionals, graph memory,
//! updates, device launch, user objects and cudarc's event tracking. Each
//! test reads its result back from the GPU and asserts it. Ignored unless
//! asked for (`cargo test -- --include-ignored`); then a missing driver
//! fails them.

mod capture_fork;
mod common;
mod conditional;
mod declarations;
mod device_launch;
mod exec;
mod host_data;
mod launch_loop;
mod memory;
mod nodes;
mod owned;
mod pdl;
mod profile;
mod sparse;
mod stream_launch;
mod tracking;
