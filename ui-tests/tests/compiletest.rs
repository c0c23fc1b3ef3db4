//! The ui suite: every diagnostic of cuda_graph! as a compile-fail case with
//! its expected rustc output, and pass cases covering every construct.
//! Regenerate expected output after a reviewed change with
//! `TRYBUILD=overwrite cargo test -p ui-tests`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/pass/*.rs");
}
