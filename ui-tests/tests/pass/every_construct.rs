// Every construct of the DSL in one named graph type.
use graph_runtime::cuda_graph;

cuda_graph! {
    /// A graph holding every node kind, edge form and attribute.
    #[auto_free_on_launch]
    #[use_node_priority]
    pub graph Everything(x_h: &[f32], x: &Vec<f32>, y: &Vec<f32>, n: u32, ev: &u64) {
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
            cond deeper = 1;
            step: kernel kernels::COUNTDOWN<<<1, 1>>>(again, x);
            nested: if deeper { deep: kernel kernels::SCALE<<<1, 32>>>(x, 1.0f32, n); }
            step -> nested;
        }
        choose: switch pick {
            0 => { c0: empty; }
            1 => { c1: fill y = 1.0f32; }
        }
        report: host move || println!("done");
        child: graph other_graph.clone();
        rec: record ev;
        wt: wait ev;
        cap: capture |stream| { blas.gemm(stream) };
        tmp: alloc f32[n];
        use_tmp: kernel kernels::SCALE<<<1, 32>>>(tmp, 1.0f32, n);
        done: free tmp;
        #[escape]
        out: alloc u32[4];
        unfreed: alloc u8[16];
        alloc scratch: f64[n] {
            s1: kernel kernels::SCALE<<<1, 32>>>(scratch, 1.0f32, n);
            s2: kernel kernels::SCALE<<<1, 32>>>(scratch, 1.0f32, n);
            s1 -> s2;
        }
        p1: kernel kernels::SCALE<<<1, 32>>>(x, 1.0f32, n);
        p2: kernel kernels::SCALE<<<1, 32>>>(x, 1.0f32, n);
        p3: kernel kernels::SCALE<<<1, 32>>>(x, 1.0f32, n);
        load -> stage1 -> [zero, decide] -> branch -> repeat -> choose -> report;
        tmp -> use_tmp -> done;
        choose -> scratch -> child -> rec -> wt -> cap;
        out -> report;
        unfreed -> report;
        p1 -(programmatic)-> p2 -(launch_order)-> p3;
    }
}

fn main() {
    assert_eq!(Everything::LABELS[0], "load");
    assert!(Everything::LABELS.contains(&"deep"));
    assert!(Everything::DOT.starts_with("digraph \"Everything\""));
    assert!(Everything::DOT.contains("\"p1\" -> \"p2\" [style=dashed, label=\"programmatic\"];"));
}
