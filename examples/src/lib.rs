//! Holds the runnable examples (see `Cargo.toml`); run one with `cargo run -p graph-examples --example NAME`.
