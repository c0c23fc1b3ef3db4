//! The checker's verdict on a source: its errors' messages, or none.

pub fn errors(src: &str) -> Vec<String> {
    let tokens: proc_macro2::TokenStream = src.parse().expect("test input tokenizes");
    match graph_macros_core::analyze(tokens) {
        Ok(()) => Vec::new(),
        Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
    }
}

pub fn assert_ok(src: &str) {
    let errs = errors(src);
    assert!(errs.is_empty(), "expected no errors, got {errs:#?}");
}

/// Exactly these errors, in order, each containing its expected text.
pub fn assert_errors(src: &str, expected: &[&str]) {
    let errs = errors(src);
    assert_eq!(errs.len(), expected.len(), "got {errs:#?}");
    for (err, want) in errs.iter().zip(expected) {
        assert!(
            err.contains(want),
            "expected `{want}` in `{err}`; all: {errs:#?}"
        );
    }
}
