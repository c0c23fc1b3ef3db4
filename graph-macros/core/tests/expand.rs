//! The generated code of every construct, formatted with prettyplease and
//! reviewed through insta snapshots: a snapshot change is a reviewed change.
//! Update after review: `INSTA_UPDATE=always cargo test -p graph-macros-core --test expand`.

fn expanded(src: &str) -> String {
    let tokens: proc_macro2::TokenStream = src.parse().expect("test input tokenizes");
    let out = graph_macros_core::expand(tokens);
    let file: syn::File = match syn::parse2(out.clone()) {
        Ok(file) => file,
        // The expression form expands to an expression: show it in a fn.
        Err(_) => syn::parse_quote!(fn expression() { let graph = #out; }),
    };
    prettyplease::unparse(&file)
}

macro_rules! snapshot {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), expanded($src));
        }
    };
}

snapshot!(
    kernel_copy_host_and_chain,
    r#"
    /// Two-stage reduction.
    pub graph Reduce(x_h: &[f32], x: &mut CudaSlice<f32>, part: &mut CudaSlice<f64>,
                     out: &mut CudaSlice<f64>, n: u32, blocks: u32) {
        load:   copy x_h => x;
        stage1: kernel kernels::ReducePartial<<<blocks, 256>>>(x, part, n);
        stage2: kernel kernels::ReduceFinal<<<1, 256, 0>>>(part, out, blocks);
        report: host move || println!("reduced");
        load -> stage1 -> stage2 -> report;
    }
"#
);

snapshot!(
    fill_empty_child_events_capture_and_fan,
    r#"
    graph Shapes(x: &mut CudaSlice<f32>, ev: &CudaEvent, stream: &Arc<CudaStream>, sub: Graph<'a>) {
        zero:  fill x = 0.0f32;
        left:  kernel kernels::Scale<<<1, 32>>>(x, 2.0f32, 32u32);
        // Deliberately unordered with `left` (say, each scales its half).
        #[disjoint(x)]
        right: kernel kernels::Scale<<<1, 32>>>(x, 3.0f32, 32u32);
        join:  empty;
        child: graph sub;
        mark:  record ev;
        after: wait ev;
        lib:   unsafe capture(stream) |s| { library_call(s) };
        zero -> [left, right] -> join -> child -> mark -> after -> lib;
    }
"#
);

snapshot!(
    data_race_checks,
    r#"
    graph Races(x: &mut CudaSlice<f32>, y: &CudaSlice<f32>, n: u32) {
        // Two kernels unordered on `x`: each asserts its parameter only reads.
        a: kernel kernels::Add<<<1, 32>>>(y, y, x, n);
        b: kernel kernels::Scale<<<1, 32>>>(x, 2.0f32, n);
        // Ordered after both: no assertion.
        c: kernel kernels::Scale<<<1, 32>>>(x, 3.0f32, n);
        [a, b] -> c;
    }
"#
);

snapshot!(
    alloc_free_and_escape,
    r#"
    graph Memory(x: &CudaSlice<f32>, n: u32) {
        tmp: alloc f32[n];
        use_tmp: kernel kernels::Add<<<1, 32>>>(x, x, tmp, n);
        done: free tmp;
        #[escape]
        result: alloc f32[n];
        keep: kernel kernels::Add<<<1, 32>>>(x, x, result, n);
        tmp -> use_tmp -> done;
        result -> keep;
    }
"#
);

snapshot!(
    alloc_scope,
    r#"
    graph Scoped(x: &CudaSlice<f32>, n: u32) {
        start: empty;
        alloc scratch: f32[n] {
            a: kernel kernels::Add<<<1, 32>>>(x, x, scratch, n);
            b: kernel kernels::Scale<<<1, 32>>>(scratch, 2.0f32, n);
            a -> b;
        }
        finish: empty;
        start -> scratch -> finish;
    }
"#
);

snapshot!(
    if_else_while_switch_nested,
    r#"
    graph Control(visits: &mut CudaSlice<i32>, counter: &mut CudaSlice<i32>, steps: &mut CudaSlice<i32>) {
        cond go;
        cond again = 1;
        cond pick = 0;
        decide: kernel kernels::SetCondition<<<1, 1>>>(go, 1u32);
        branch: if go {
            yes: kernel kernels::Mark<<<1, 1>>>(visits, 0u32);
        } else {
            no: empty;
        }
        repeat: while again {
            cond inner = 1;
            step: kernel kernels::Countdown<<<1, 1>>>(again, counter, steps);
            nested: if inner { deep: kernel kernels::Mark<<<1, 1>>>(visits, 1u32); }
            step -> nested;
        }
        choose: switch pick {
            0 => { first: kernel kernels::Mark<<<1, 1>>>(visits, 2u32); }
            1 => { second: empty; }
        }
        decide -> branch -> repeat -> choose;
    }
"#
);

snapshot!(
    attributes_and_programmatic_edges,
    r#"
    #[use_node_priority]
    #[auto_free_on_launch]
    graph Tuned(x: &mut CudaSlice<f32>, n: u32) {
        #[priority(1)]
        first: kernel kernels::AddOne<<<1, 32>>>(x, n);
        #[disabled]
        second: kernel kernels::PdlAddOne<<<1, 32>>>(x, n);
        third: kernel kernels::PdlAddOne<<<1, 32>>>(x, n);
        fourth: kernel kernels::PdlAddOne<<<1, 32>>>(x, n);
        tmp: alloc f32[n];
        first -> second -(programmatic)-> third;
        #[launch_order]
        third -> fourth;
    }
"#
);

snapshot!(
    device_launch_graph,
    r#"
    #[device_launch]
    graph OnDevice(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>, n: u32) {
        step: kernel kernels::AddOne<<<1, 32>>>(x, n);
        back: copy x => y;
        step -> back;
    }
"#
);

snapshot!(
    expression_form,
    r#"
    graph(&ctx) {
        cond go = 1;
        load: copy &x_h => &mut x;
        twice: kernel kernels::Scale<<<1, 32>>>(&mut x, 2.0f32, n);
        branch: if go { again: kernel kernels::Scale<<<1, 32>>>(&mut x, 2.0f32, n); }
        load -> twice -> branch;
    }
"#
);

snapshot!(
    invalid_graph_falls_back,
    r#"
    pub graph Broken(x: &mut CudaSlice<f32>) {
        a: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
        a -> a;
    }
"#
);

snapshot!(
    capture_setting_a_while_handle,
    r#"
    graph CapturedLoop(stream: &Arc<CudaStream>, counter: &mut CudaSlice<i32>) {
        cond again = 1;
        spin: while again {
            step: unsafe capture(stream) |s| { countdown(s, again.raw(), counter) };
        }
    }
"#
);

snapshot!(
    escaped_parameter_used_and_freed,
    r#"
    graph UseAndFree(data: Escaped<f32>, out: &mut CudaSlice<f32>, n: u32) {
        bump: kernel kernels::AddOne<<<n.div_ceil(256), 256>>>(data, n);
        copy: copy data => out;
        done: free data;
        bump -> copy -> done;
    }
"#
);

snapshot!(
    cfg_on_every_item,
    r#"
    /// Only with the `gpu-extra` feature.
    #[cfg(feature = "gpu-extra")]
    pub graph Extra(x: &mut CudaSlice<f32>, n: u32) {
        bump: kernel kernels::AddOne<<<1, 32>>>(x, n);
    }
"#
);

snapshot!(
    crate_path_renamed_runtime,
    r#"
    #[crate_path = ::my_rt]
    graph Renamed(x: &mut CudaSlice<f32>, n: u32) {
        bump: kernel kernels::AddOne<<<1, 32>>>(x, n);
        // The user's own paths stay as written.
        note: host move || { let _: ::graph_runtime::Result<()> = Ok(()); };
        bump -> note;
    }
"#
);

snapshot!(
    nested_repetition,
    r#"
    pub graph Lanes(x: &mut CudaSlice<f32>, width: usize, length: u32) {
        init: fill x = 0.0f32;
        #[disjoint(x)]
        lanes: for w in 0..width {
            chain: for i in 0..length {
                step: kernel kernels::AddOne<<<1, 32>>>(x.slice(w * 32..(w + 1) * 32), 32u32);
                step[i-1] -> step;
            }
        }
        done: kernel kernels::Scale<<<1, 32>>>(x, 2.0f32, 32u32);
        init -> lanes -> done;
    }
"#
);

snapshot!(
    repetition_with_scope_conditional_and_history,
    r#"
    pub graph PerIteration(x: &mut CudaSlice<f32>, layers: u32) {
        layer: for l in 0..layers {
            cond go = 1;
            alloc scratch: f32[32] {
                fill_it: kernel kernels::Iota<<<1, 32>>>(scratch, 32u32);
                add: kernel kernels::Add<<<1, 32>>>(scratch, x, x, 32u32);
                fill_it -> add;
            }
            maybe: if go {
                again: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
            }
            scratch -> maybe;
            maybe[l-1] -> scratch;
        }
    }
"#
);

snapshot!(
    fragment_placed_twice,
    r#"
    pub graph Placed(x: &mut CudaSlice<f32>, counter: &mut CudaSlice<i32>, n: usize) {
        cond again = 1;
        fragment step {
            bump: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
            down: kernel kernels::CountdownStep<<<1, 1>>>(again, counter);
            bump -> down;
        }
        first: use step;
        rest: while again {
            body: use step;
        }
        more: for i in 0..n {
            each: use step;
            each[i-1] -> each;
        }
        first -> rest -> more;
    }
"#
);

snapshot!(
    host_buffers,
    r#"
    /// Sums on the host what a copy brought back; a host node picks a
    /// factor that a copy sends up.
    pub graph HostSum(x: &mut CudaSlice<f32>, total: Arc<Mutex<f64>>, n: u32) {
        host seen: f32[n];
        host factor: f32[1];
        down: copy x => seen;
        sum: host move |seen: &[f32]| {
            *total.lock().unwrap() = seen.iter().map(|v| f64::from(*v)).sum();
        };
        pick: host |factor: &mut [f32]| factor[0] = 2.0;
        up: copy factor => x;
        down -> sum;
        [down, pick] -> up;
    }
"#
);

snapshot!(
    device_buffers,
    r#"
    /// A residual the graph owns: zeroed, summed into by a kernel, read
    /// back between launches through `exec.residual()`; a rebuild keeps it.
    pub graph Residual(x: &CudaSlice<f32>, n: u32) {
        buffer residual: f64[1];
        buffer scratch: f32[n];
        reset: fill residual = 0.0f64;
        square: kernel kernels::Square<<<n.div_ceil(256), 256>>>(x, scratch, n);
        sum: kernel kernels::Sum<<<1, 256>>>(scratch, residual, n);
        [reset, square] -> sum;
    }
"#
);

/// A node table past 256 accessor nodes is split into parts of 256 (rustc
/// looks a field up by scanning its struct, so one table of thousands of
/// fields made the build quadratic); below it, one table (the snapshots
/// above). Too large for a snapshot: the parts are checked by name.
#[test]
fn a_large_node_table_is_split_into_parts() {
    let nodes: String = (0..600)
        .map(|i| format!("k{i}: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);\n"))
        .collect();
    let chain = (0..600)
        .map(|i| format!("k{i}"))
        .collect::<Vec<_>>()
        .join(" -> ");
    let code = expanded(&format!(
        "pub graph Big(x: &mut CudaSlice<f32>) {{ {nodes} {chain}; }}"
    ));
    for part in 0..3 {
        assert!(
            code.contains(&format!("pub struct __BigNodes{part} {{")),
            "part {part}"
        );
        assert!(
            code.contains(&format!("__part{part}: __BigNodes{part},")),
            "field {part}"
        );
    }
    assert!(!code.contains("__BigNodes3"), "three parts of at most 256");
    assert!(
        code.contains("self.nodes.__part2.k599"),
        "k599 is in the last part"
    );
    assert!(code.contains("self.nodes.__part0.k0"), "k0 is in the first");
}
