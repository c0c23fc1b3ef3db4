//! The property tests' case count: PROPTEST_CASES (the long runs), else
//! 2,000 (CI's short pass); failures are not persisted.

use proptest::test_runner::Config;

pub fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}
