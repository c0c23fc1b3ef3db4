//! The checker's verdicts on small graphs: valid graphs pass, and each rule
//! reports its message (the ui-tests pin the spans and rendering).

#[path = "common/verdicts.rs"]
#[allow(dead_code)]
mod verdicts;
use verdicts::*;

const FULL: &str = r#"
    /// Every construct once.
    #[auto_free_on_launch]
    #[use_node_priority]
    pub graph Everything(x_h: &[f32], x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, n: u32, ev: &CudaEvent) {
        cond go;
        cond again = 1;
        cond pick = 0;
        load: copy x_h => x;
        #[priority(2)]
        stage1: kernel kernels::SCALE<<<(n + 255) / 256, 256>>>(x, 2.0f32, n);
        #[disabled]
        zero: fill y = 0.0f32;
        decide: kernel kernels::SET_COND<<<1, 1, 0>>>(go, 1u32);
        branch: if go {
            inner: kernel kernels::SCALE<<<1, 32>>>(x, 3.0f32, n);
        } else {
            other: empty;
        }
        repeat: while again {
            step: kernel kernels::COUNTDOWN<<<1, 1>>>(again, x);
            cond deeper = 1;
            nested: if deeper { deep: kernel kernels::SCALE<<<1, 32>>>(x, 1.0f32, n); }
        }
        choose: switch pick {
            0 => { c0: empty; }
            1 => { c1: fill y = 1.0f32; }
        }
        report: host move || println!("done");
        child: graph other_graph.clone();
        rec: record ev;
        wt: wait ev;
        cap: unsafe capture(&stream) |s| { blas.gemm(s) };
        tmp: alloc f32[n];
        use_tmp: kernel kernels::SCALE<<<1, 32>>>(tmp, 1.0f32, n);
        done: free tmp;
        #[escape]
        out: alloc u32[4];
        alloc scratch: f64[n] {
            s1: kernel kernels::SCALE<<<1, 32>>>(scratch, 1.0f32, n);
            s2: kernel kernels::SCALE<<<1, 32>>>(scratch, 1.0f32, n);
            s1 -> s2;
        }
        load -> stage1 -> [zero, decide] -> branch -> repeat -> choose -> report;
        tmp -> use_tmp -> done;
        choose -> scratch -> child;
        child -(programmatic)-> rec;
        rec -> wt -> cap;
        out -> report;
    }
"#;

#[test]
fn every_construct_passes_but_programmatic_edge_to_non_kernel() {
    assert_errors(FULL, &["programmatic dependent launch edge joins two kernel nodes, but `child` is a child graph node"]);
    assert_ok(&FULL.replace("child -(programmatic)-> rec;", "child -> rec;"));
}

#[test]
fn expression_form_passes() {
    assert_ok("graph(&ctx) { a: empty; b: kernel k::K<<<1, 1>>>(x); a -> b; }");
}

#[test]
fn duplicate_label() {
    assert_errors(
        "graph G() { a: empty; a: empty; }",
        &["the label `a` is defined more than once"],
    );
}

#[test]
fn unknown_label_with_suggestion() {
    assert_errors(
        "graph G() { stage1: empty; stage2: empty; stage1 -> stag2; }",
        &["unknown label `stag2`\n= help: a node with a similar label exists: `stage2`"],
    );
}

#[test]
fn self_edge() {
    assert_errors("graph G() { a: empty; a -> a; }", &["self-edge: `a -> a`"]);
}

#[test]
fn cycle_is_named_whole() {
    assert_errors(
        "graph G() { a: empty; b: empty; c: empty; d: empty; a -> b -> c -> a; c -> d; }",
        &["cycle: a -> b -> c -> a"],
    );
}

#[test]
fn two_independent_cycles() {
    let errs =
        errors("graph G() { a: empty; b: empty; c: empty; d: empty; a -> b -> a; c -> d -> c; }");
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert!(errs[0].starts_with("cycle: a -> b -> a"));
    assert!(errs[1].starts_with("cycle: c -> d -> c"));
}

#[test]
fn duplicate_edge() {
    assert_errors(
        "graph G() { a: empty; b: empty; a -> b; a -> [b]; }",
        &["duplicate edge `a -> b`"],
    );
}

#[test]
fn edge_crossing_a_body() {
    assert_errors(
        "graph G() { cond c = 1; a: empty; w: if c { k: empty; } a -> k; }",
        &["edge crosses a conditional body's boundary: `k` is inside the body of `w`"],
    );
    assert_errors(
        "graph G() { cond c = 1; a: empty; w: if c { k: empty; k -> a; } }",
        &["edge crosses a conditional body's boundary: `a` is outside the body of `w`"],
    );
}

#[test]
fn use_before_alloc_and_after_free() {
    assert_errors(
        "graph G(n: usize) {
            buf: alloc f32[n];
            k1: kernel k::K<<<1, 1>>>(buf);
            k2: kernel k::K<<<1, 1>>>(buf);
            done: free buf;
            buf -> k1 -> done;
         }",
        &["`buf` is used by `k2` before it is allocated: `k2` is not ordered after the alloc node `buf`\n= help: add an edge buf -> k2"],
    );
    assert_errors(
        "graph G(n: usize) {
            buf: alloc f32[n];
            k1: kernel k::K<<<1, 1>>>(buf);
            k2: kernel k::K<<<1, 1>>>(buf);
            done: free buf;
            buf -> k1 -> done;
            buf -> k2;
         }",
        &["add an edge k2 -> done so that done frees buf after its last use"],
    );
}

#[test]
fn races_on_buffer_parameters_passed_by_value() {
    // A `Buf` parameter is a buffer like a `&mut CudaSlice` one; a scalar
    // parameter passed to two kernels is not.
    assert_errors(
        "graph G(x: Buf<'a, f32>, n: u32) {
            a: fill x = 0.0f32;
            b: fill x = 1.0f32;
            k1: kernel k::K<<<1, 1>>>(n);
            k2: kernel k::K<<<1, 1>>>(n);
         }",
        &["data race on `x`: `a` writes it while `b` writes it, and no path orders them"],
    );
}

#[test]
fn use_inside_conditional_body_is_ordered_through_its_node() {
    assert_errors(
        "graph G(n: usize) {
            cond c = 1;
            buf: alloc f32[n];
            w: while c { k: kernel k::K<<<1, 1>>>(buf, c); }
            done: free buf;
            buf -> done;
         }",
        &["`buf` is used by `k` before it is allocated: `w`, whose body holds `k`,"],
    );
}

#[test]
fn freeing_what_is_not_allocated() {
    assert_errors(
        "graph G(x: &Buf) { f: free x; }",
        &["cannot free `x`: `x` is a parameter of the graph"],
    );
    assert_errors(
        "graph G() { f: free y; }",
        &["cannot free `y`: `y` is not allocated by this graph"],
    );
}

#[test]
fn double_free_and_never_freed() {
    assert_errors(
        "graph G() { b: alloc u8[1]; f1: free b; f2: free b; b -> f1 -> f2; }",
        &["`b` is freed twice"],
    );
    assert_errors(
        "graph G() { b: alloc u8[1]; }",
        &["graph allocation `b` is never freed"],
    );
    assert_ok("#[auto_free_on_launch] graph G() { b: alloc u8[1]; }");
    assert_ok("graph G() { #[escape] b: alloc u8[1]; }");
}

#[test]
fn memory_inside_conditional_body() {
    assert_errors(
        "graph G() { cond c = 1; i: if c { b: alloc u8[1]; f: free b; b -> f; } }",
        &[
            "a conditional body cannot hold graph memory nodes",
            "a conditional body cannot hold graph memory nodes",
        ],
    );
}

#[test]
fn scoped_buffer_outside_scope() {
    assert_errors(
        "graph G() { alloc s: u8[4] { k: kernel k::K<<<1, 1>>>(s); } out: kernel k::K<<<1, 1>>>(s); s -> out; }",
        &["`s` is used by `out` outside its alloc scope"],
    );
}

#[test]
fn scope_orders_its_body() {
    assert_ok(
        "graph G() {
            a: empty;
            alloc s: u8[4] {
                k1: kernel k::K<<<1, 1>>>(s);
                alloc t: u8[4] { k2: kernel k::K<<<1, 1>>>(s, t); }
                k3: kernel k::K<<<1, 1>>>(s);
                k1 -> t;
            }
            b: empty;
            a -> s -> b;
         }",
    );
}

#[test]
fn conditional_rules() {
    assert_errors(
        "graph G() { cond c = 1; i: if c { a: empty; } j: if c { b: empty; } }",
        &["the conditional handle `c` already drives `i`"],
    );
    // A handle must drive a conditional node (CUDA: "must be associated
    // with a conditional node in this graph"): set only, or unused, it is
    // refused at its declaration; one named by a refused node is not
    // reported again.
    assert_errors(
        "graph G() { cond c = 0; s: kernel k::SET<<<1, 1>>>(c, 1u32); }",
        &["the conditional handle `c` drives no conditional node"],
    );
    assert_errors(
        "graph G() { cond c; a: empty; }",
        &["the conditional handle `c` drives no conditional node"],
    );
    assert_errors(
        "graph G(n: usize) { cond go = 1; l: for i in 0..n { maybe: if go { a: empty; } } }",
        &["the handle `go` would drive `maybe` in every iteration of `l`, but a handle drives one conditional node"],
    );
    assert_errors(
        "graph G() { cond c; i: if c { a: empty; } }",
        &["`i` reads the conditional handle `c`, which has no default and is not set by any node upstream"],
    );
    assert_ok("graph G() { cond c; s: kernel k::SET<<<1, 1>>>(c); i: if c { a: empty; } s -> i; }");
    assert_errors(
        "graph G() { cond c = 1; w: while c { a: empty; } }",
        &["`while c` can never stop: no kernel or capture in its body takes `c`"],
    );
    assert_errors(
        "graph G() { cond c = 0; s: switch c { 0 => { a: empty; } 2 => { b: empty; } } }",
        &["switch arms must be exactly 0..2: expected arm `1` here"],
    );
    assert_errors(
        "graph G() { cond c = 1; i: if c { h: host || (); } }",
        &["a conditional body cannot hold a host node"],
    );
    assert_errors(
        "graph G() { i: if nope { a: empty; } }",
        &["unknown conditional handle `nope`"],
    );
}

#[test]
fn handle_set_in_enclosing_graph() {
    assert_ok(
        "graph G() {
            cond outer; cond inner;
            s: kernel k::SET<<<1, 1>>>(outer, inner);
            w: if outer { i: if inner { a: empty; } }
            s -> w;
         }",
    );
}

#[test]
fn device_launch_and_attributes() {
    assert_errors(
        "#[device_launch] graph G() { k: kernel k::K<<<1, 1>>>(); h: host || (); }",
        &["a `#[device_launch]` graph may hold only kernel, copy, fill and child graph nodes, but `h` is a host node"],
    );
    assert_errors(
        "graph G() { #[disabled] e: empty; }",
        &["`#[disabled]` applies only to kernel, copy and fill nodes"],
    );
    assert_errors(
        "graph G() { #[bogus] e: empty; }",
        &["unknown node attribute `bogus`"],
    );
    assert_errors(
        "#[bogus] graph G() { }",
        &["unknown graph attribute `bogus`"],
    );
    assert_errors(
        "graph G() { #[escape] e: empty; }",
        &["`#[escape]` applies only to alloc nodes"],
    );
    assert_errors(
        "graph G() { #[priority(1)] e: kernel k::K<<<1,1>>>(); }",
        &["add `#[use_node_priority]`"],
    );
}

#[test]
fn several_errors_in_one_call() {
    let errs = errors(
        "graph G() { a: empty; a: empty; b: empty; b -> c; b -> b; cond x; i: if x { h: host || (); } }",
    );
    // Duplicate label, unknown label, self-edge, host node in a body; the
    // unset handle `x` is an ordering verdict, left out while the edge to
    // the unknown `c` is missing (it would be the missing edge's doing).
    assert_eq!(errs.len(), 4, "{errs:#?}");
}

#[test]
fn several_syntax_errors_in_one_call() {
    let errs = errors("graph G() { a: nonsense; b: empty; c: kernel K<<<1>>>(); d: empty; }");
    assert_eq!(errs.len(), 2, "{errs:#?}");
}

#[test]
fn nodes_labelled_like_node_kinds_still_start_edges() {
    // `copy -> fill` is an edge between nodes so labelled, not an
    // unlabeled copy node.
    assert_ok(
        "graph G(x: &CudaSlice<f32>, y: &mut CudaSlice<f32>, ev: &CudaEvent) {
            copy: copy x => y;
            fill: fill y = 0.0f32;
            record: record ev;
            wait: wait ev;
            copy -> fill -> record -> wait;
            [copy, fill] -> empty;
            empty: empty;
        }",
    );
}

#[test]
fn unlabeled_nodes_ask_for_a_label_and_the_rest_still_parses() {
    assert_errors(
        "graph G(x: &mut CudaSlice<f32>) {
            cond go = 1;
            if go { e: empty; }
            fill x = 0.0f32;
            empty;
            alloc f32[4];
            alloc s: f32[4];
            a: empty;
        }",
        &[
            "an `if` node needs a label",
            "a `fill` node needs a label",
            "an `empty` node needs a label",
            "an `alloc` node needs a label",
            "an alloc scope needs a body: `alloc s: T[len] { ... }`",
        ],
    );
}

#[test]
fn a_setter_unordered_with_its_reader() {
    assert_errors(
        "graph G() { cond go = 1; s: kernel K<<<1,1>>>(go, 0u32); b: if go { e: empty; } }",
        &["`s` sets the conditional handle `go` while `b` may be reading it: nothing orders them\n= help: order them with an edge: `s -> b` to set it for this launch's `b`, or `b -> s` to set it after"],
    );
    // Before, after, or inside the reader's body: ordered.
    assert_ok(
        "graph G() { cond go = 1; s: kernel K<<<1,1>>>(go, 0u32); b: if go { e: empty; } s -> b; }",
    );
    assert_ok(
        "graph G() { cond go = 1; b: if go { e: empty; } s: kernel K<<<1,1>>>(go, 0u32); b -> s; }",
    );
    assert_ok("graph G() { cond go = 1; w: while go { s: kernel K<<<1,1>>>(go, 0u32); } }");
    // A setter in a body of another conditional node counts as that node.
    assert_errors(
        "graph G() { cond go = 1; cond other = 1; o: if other { s: kernel K<<<1,1>>>(go, 0u32); } b: if go { e: empty; } }",
        &["`s` sets the conditional handle `go` while `b` may be reading it: nothing orders them\n= help: order them with an edge: `o -> b` to set it for this launch's `b`, or `b -> o` to set it after"],
    );
    assert_ok("graph G() { cond go = 1; cond other = 1; o: if other { s: kernel K<<<1,1>>>(go, 0u32); } b: if go { e: empty; } o -> b; }");
}

#[test]
fn a_while_set_only_in_a_repeated_block_may_never_stop() {
    assert_errors(
        "graph G(n: usize) { cond w0 = 1; w: while w0 { b: for i in 0..n { s: kernel K<<<1,1>>>(w0, 0u32); s[i-1] -> s; } } }",
        &["`while w0` may never stop: its body sets `w0` only in the repeated block `b`, which may run 0 times\n= help: set `w0` in the body outside `b` too"],
    );
    assert_errors(
        "graph G() { cond w0 = 1; w: while w0 { e: empty; } }",
        &["`while w0` can never stop: no kernel or capture in its body takes `w0`"],
    );
}
