//! The checker's verdicts on repeated blocks: what is allowed, and each
//! rule's message (the ui-tests pin the spans and rendering).

#[path = "common/verdicts.rs"]
#[allow(dead_code)]
mod verdicts;
use verdicts::*;

#[test]
fn chains_lanes_scopes_conditionals_and_captures_check_clean() {
    assert_ok(
        "graph G(x: &mut CudaSlice<f32>, w: usize, n: u32, s: &Arc<CudaStream>) {
            init: fill x = 0.0f32;
            #[disjoint(x)]
            lanes: for l in 0..w {
                chain: for i in 0..n {
                    step: kernel k::AddOne<<<1, 32>>>(x.slice(l * 32..(l + 1) * 32), 32u32);
                    step[i-1] -> step;
                }
            }
            layers: for j in 0..n {
                cond go = 1;
                alloc tmp: f32[32] { use_tmp: kernel k::Add<<<1, 32>>>(tmp, x, x, 32u32); }
                maybe: if go { again: kernel k::AddOne<<<1, 32>>>(x, 32u32); }
                lib: unsafe capture(s) |c| { let _ = (c, j); Ok(()) };
                tmp -> maybe -> lib;
                lib[j-1] -> tmp;
            }
            init -> lanes -> layers;
        }",
    );
}

#[test]
fn a_block_in_a_conditional_body_and_one_chained_two_back() {
    assert_ok(
        "graph G(x: &mut CudaSlice<f32>, c: &mut CudaSlice<i32>, n: usize) {
            cond again = 1;
            outer: while again {
                sweeps: for s in 0..n {
                    a: kernel k::AddOne<<<1, 32>>>(x, 32u32);
                    b: kernel k::AddOne<<<1, 32>>>(x, 32u32);
                    a -> b;
                    b[s-1] -> a;
                }
                stop: kernel k::CountdownStep<<<1, 1>>>(again, c);
                sweeps -> stop;
            }
        }",
    );
}

#[test]
fn iterations_writing_one_buffer_unordered_race() {
    assert_errors(
        "graph G(x: &mut CudaSlice<f32>, n: usize) {
            lanes: for i in 0..n {
                zero: fill x = 0.0f32;
            }
        }",
        &["data race on `x` between iterations of `lanes`: `zero` of one iteration and `zero` of the next"],
    );
    // Two edges back orders iteration i with i + 2, not with i + 1.
    assert_errors(
        "graph G(x: &mut CudaSlice<f32>, n: usize) {
            lanes: for i in 0..n {
                zero: fill x = 0.0f32;
                zero[i-2] -> zero;
            }
        }",
        &["data race on `x` between iterations of `lanes`"],
    );
    // A read in one iteration and a write in the next.
    assert_errors(
        "graph G(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, n: usize) {
            lanes: for i in 0..n {
                read: copy x => y;
                write: fill x = 1.0f32;
                read -> write;
            }
        }",
        &[
            "data race on `x` between iterations of `lanes`: `read` of one iteration and `write` of the next",
            "data race on `y` between iterations of `lanes`: `read` of one iteration and `read` of the next",
        ],
    );
    assert_ok(
        "graph G(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, n: usize) {
            lanes: for i in 0..n {
                read: copy x => y;
                write: fill x = 1.0f32;
                read -> write;
                write[i-1] -> read;
            }
        }",
    );
}

#[test]
fn sliced_operands_are_accesses_of_their_buffer() {
    assert_errors(
        "graph G(x: &mut CudaSlice<f32>) {
            a: fill x.slice(0..16) = 0.0f32;
            b: fill x.slice(16..32) = 0.0f32;
        }",
        &["data race on `x`: `a` writes it while `b` writes it"],
    );
}

#[test]
fn edges_between_iterations_go_forward() {
    assert_errors(
        "graph G(n: usize) {
            l: for i in 0..n { a: empty; b: empty; a -> b[i-1]; }
        }",
        &["`a -> b[i-1]` points back to an earlier iteration"],
    );
    assert_errors(
        "graph G(n: usize) {
            l: for i in 0..n { a: empty; a -> a[i+1]; }
        }",
        &["names a later iteration"],
    );
}

#[test]
fn labels_and_indices_stay_in_their_block() {
    assert_errors(
        "graph G(n: usize) {
            before: empty;
            l: for i in 0..n { a: empty; }
            before -> a;
        }",
        &["`a` is inside the repeated block `l`"],
    );
    assert_errors(
        "graph G(n: usize) {
            before: empty;
            l: for i in 0..n { a: empty; before -> a; }
        }",
        &["`before` is outside the repeated block `l`"],
    );
    assert_errors(
        "graph G(n: usize) {
            a: empty; b: empty;
            a[i-1] -> b;
        }",
        &["names an iteration, but this edge is outside every repeated block"],
    );
    assert_errors(
        "graph G(n: usize) {
            outer: for w in 0..n {
                inner: for i in 0..n { a: empty; a[w-1] -> a; }
            }
        }",
        &["`w` is the loop variable of `outer`, but this edge is in `inner`"],
    );
    assert_errors(
        "graph G(n: usize) {
            outer: for i in 0..n { inner: for i in 0..n { a: empty; } }
        }",
        &["`i` is already the loop variable of `outer`"],
    );
}

#[test]
fn allocations_in_a_block_live_in_one_iteration() {
    assert_errors(
        "graph G(n: usize) {
            l: for i in 0..n {
                tmp: alloc f32[32];
                use_it: kernel k::Iota<<<1, 32>>>(tmp, 32u32);
                tmp -> use_it;
            }
            later: kernel k::Iota<<<1, 32>>>(tmp, 32u32);
            done: free tmp;
            l -> later -> done;
        }",
        &[
            "`done` frees `tmp`, which is allocated in every iteration of `l`, outside that block",
            "`tmp` is allocated in every iteration of `l`, but `later` uses it outside that block",
        ],
    );
    assert_errors(
        "graph G(n: usize) {
            buf: alloc f32[32];
            l: for i in 0..n { done: free buf; }
            buf -> l;
        }",
        &["`done` would free `buf` in every iteration of `l`, but it is allocated once"],
    );
    assert_errors(
        "graph G(n: usize) {
            l: for i in 0..n { #[escape] out: alloc f32[32]; }
        }",
        &["`out` is allocated in every iteration of `l` and cannot escape"],
    );
}

#[test]
fn handles_repeat_with_their_conditional_nodes() {
    assert_errors(
        "graph G(n: usize) {
            cond go = 1;
            l: for i in 0..n { maybe: if go { a: empty; } }
        }",
        &["the handle `go` would drive `maybe` in every iteration of `l`"],
    );
    assert_errors(
        "graph G(n: usize) {
            cond go;
            l: for i in 0..n { set: kernel k::SetCondition<<<1, 1>>>(go, 1u32); }
            maybe: if go { a: empty; }
            l -> maybe;
        }",
        &[
            "`maybe` reads the conditional handle `go`, which has no default and is set only in the repeated block `l`",
            "the handle `go` is set by `set` of one iteration and `set` of the next",
        ],
    );
    assert_ok(
        "graph G(n: usize) {
            cond go = 0;
            l: for i in 0..n {
                set: kernel k::SetCondition<<<1, 1>>>(go, 1u32);
                set[i-1] -> set;
            }
            maybe: if go { a: empty; }
            l -> maybe;
        }",
    );
}

#[test]
fn cycles_through_a_block_are_named() {
    assert_errors(
        "graph G(n: usize) {
            a: empty;
            l: for i in 0..n { b: empty; }
            a -> l -> a;
        }",
        &["cycle: a -> l -> b -> a"],
    );
}

#[test]
fn the_count_counts_from_zero() {
    assert_errors(
        "graph G(n: usize) { l: for i in 1..n { a: empty; } }",
        &["a repeated block counts from 0"],
    );
}

#[test]
fn fragments_are_checked_where_placed() {
    // One solver iteration as a prologue and as a `while` body; its kernel
    // sets the loop's handle.
    assert_ok(
        "graph G(x: &mut CudaSlice<f32>, c: &mut CudaSlice<i32>) {
            cond again = 1;
            fragment sweep {
                a: kernel k::AddOne<<<1, 32>>>(x, 32u32);
                b: kernel k::CountdownStep<<<1, 1>>>(again, c);
                a -> b;
            }
            first: use sweep;
            rest: while again { body: use sweep; }
            first -> rest;
        }",
    );
    // Two placements unordered race on what they write.
    assert_errors(
        "graph G(x: &mut CudaSlice<f32>) {
            fragment zero { z: fill x = 0.0f32; }
            one: use zero;
            two: use zero;
        }",
        &["data race on `x`: `one.z` writes it while `two.z` writes it"],
    );
    assert_errors(
        "graph G(n: usize) {
            fragment f { a: empty; inner: use f; }
            p: use f;
            q: use nothing;
        }",
        &[
            "the fragment `f` is placed inside itself",
            "unknown fragment `nothing`",
        ],
    );
    assert_errors(
        "graph G(n: usize) {
            fragment f { cond go; t: alloc f32[4]; a: empty; b: empty; a -> outside; }
            outside: empty;
            p: use f;
        }",
        &[
            "a `cond` handle cannot be in a fragment (`f`)",
            "a graph memory node cannot be in a fragment (`f`)",
            "`outside` is outside the fragment placed as `p`",
        ],
    );
}

/// Findings of the attack review (issue 28): each as a regression case.
#[test]
fn attack_review_regressions() {
    // Each iteration's allocation is its own buffer: no race between them.
    assert_ok(
        "graph G(n: usize) {
            blk: for i in 0..n { t: alloc f32[32]; u: fill t = 0.0f32; f: free t; t -> u -> f; }
        }",
    );
    // An edge between iterations that lands inside a scope or a fragment.
    assert_ok(
        "graph G(x: &mut CudaSlice<f32>, n: usize) {
            blk: for i in 0..n { alloc t: f32[32] { u: fill x = 0.0f32; } u[i-1] -> u; }
        }",
    );
    assert_ok(
        "graph G(x: &mut CudaSlice<f32>, n: usize) {
            fragment f { u: fill x = 0.0f32; u[i-1] -> u; }
            blk: for i in 0..n { p: use f; }
        }",
    );
    // A handle declared in a block and set outside it.
    assert_errors(
        "graph G(c: &mut CudaSlice<i32>, n: usize) {
            blk: for i in 0..n { cond h = 0; w: if h { a: empty; } w[i-1] -> w; }
            s: kernel k::CountdownStep<<<1, 1>>>(h, c);
            blk -> s;
        }",
        &["the handle `h` is declared in the repeated block `blk`, which does not hold `s`"],
    );
    // An allocation of another graph freed in every iteration.
    assert_errors(
        "graph G(e: Escaped<f32>, n: usize) { blk: for i in 0..n { f: free e; f[i-1] -> f; } }",
        &["`f` would free `e` in every iteration of `blk`"],
    );
    // A handle without a default set only in a block (a count of 0 sets nothing).
    assert_errors(
        "graph G(c: &mut CudaSlice<i32>, n: usize) {
            cond h;
            blk: for i in 0..n { s: kernel k::CountdownStep<<<1, 1>>>(h, c); s[i-1] -> s; }
            w: if h { a: empty; }
            blk -> w;
        }",
        &["`w` reads the conditional handle `h`, which has no default and is set only in the repeated block `blk`, which may run 0 times"],
    );
    // `#[disjoint]` on a block is about its iterations: within one, and
    // against the nodes around it, races are still reported.
    assert_errors(
        "graph G(x: &mut CudaSlice<f32>, n: usize) {
            #[disjoint(x)]
            blk: for i in 0..n { a: fill x.slice(i..i + 1) = 0.0f32; b: fill x.slice(i..i + 1) = 1.0f32; }
        }",
        &["data race on `x`: `a` writes it while `b` writes it"],
    );
}

/// Findings of the second attack review (issue 28).
#[test]
fn second_attack_review_regressions() {
    // A fragment never placed is an error (its body would compile unseen).
    assert_errors(
        "graph G(n: usize) { fragment f { a: empty; a -> zzz; } b: empty; }",
        &["the fragment `f` is never placed"],
    );
    // A handle set only in a conditional body (which may not run).
    assert_errors(
        "graph G() {
            cond g = 0;
            cond h;
            b: if g { s: kernel k::SetCondition<<<1, 1>>>(h, 1u32); }
            w: if h { a: empty; }
            b -> w;
        }",
        &["`w` reads the conditional handle `h`, which has no default and is set only in the body of `b`, which may not run"],
    );
    // A handle refused in a fragment is still declared: its uses resolve.
    assert_errors(
        "graph G(c: &mut CudaSlice<i32>) {
            fragment f { cond h = 1; s: kernel k::CountdownStep<<<1, 1>>>(h, c); w: if h { a: empty; } s -> w; }
            p: use f;
        }",
        &["a `cond` handle cannot be in a fragment (`f`)"],
    );
}

/// An iteration race's hint offers `#[disjoint]` only where the operand
/// names a part by the loop variable; one that uses the buffer whole can
/// only be ordered.
#[test]
fn iteration_race_hints_offer_disjoint_only_for_parts_by_the_variable() {
    let whole = errors(
        "graph G(x: &mut CudaSlice<f32>, n: usize) { l: for i in 0..n { z: fill x = 0.0f32; } }",
    );
    assert_eq!(whole.len(), 1, "{whole:#?}");
    assert!(
        whole[0].contains("every iteration of `l` uses the same `x`")
            && !whole[0].contains("disjoint"),
        "{whole:#?}"
    );
    let part = errors(
        "graph G(x: &mut CudaSlice<f32>, n: usize) { l: for i in 0..n { z: fill x.slice(i..i + 1) = 0.0f32; } }",
    );
    assert_eq!(part.len(), 1, "{part:#?}");
    assert!(part[0].contains("`#[disjoint(x)]`"), "{part:#?}");
}

/// A missing edge in a block's body races there and, through it, between
/// iterations: the race within the iteration, whose fix is that edge, is
/// reported first.
#[test]
fn a_race_within_an_iteration_comes_before_those_between_iterations() {
    let errs = errors(
        "graph G(x: &mut CudaSlice<f32>, n: usize) { l: for i in 0..n { a: fill x = 0.0f32; b: fill x = 1.0f32; } }",
    );
    assert!(errs.len() >= 2, "{errs:#?}");
    assert!(
        errs[0].contains("no path orders them") && !errs[0].contains("between iterations"),
        "{errs:#?}"
    );
    assert!(
        errs.iter()
            .skip(1)
            .any(|e| e.contains("between iterations")),
        "{errs:#?}"
    );
}
