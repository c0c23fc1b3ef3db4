// Every construct of the DSL in one named graph type, against real kernels.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::{CudaEvent, CudaSlice, CudaStream};
use std::sync::Arc;

cuda_graph! {
    /// A graph holding every node kind, edge form and attribute.
    #[auto_free_on_launch]
    #[use_node_priority]
    pub graph Everything(x_h: &[f32], x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>,
                         visits: &mut CudaSlice<i32>, counter: &mut CudaSlice<i32>,
                         n: u32, ev: &CudaEvent, stream: &Arc<CudaStream>, sub: graph_runtime::Graph<'a>) {
        cond go;
        cond again = 1;
        cond pick = 0;
        load: copy x_h => x;
        #[priority(2)]
        stage1: kernel kernels::Scale<<<(n + 255) / 256, 256>>>(x, 2.0f32, n);
        #[disabled]
        zero: fill y = 0.0f32;
        decide: kernel kernels::SetCondition<<<1, 1, 0>>>(go, 1u32);
        branch: if go {
            inner: kernel kernels::Scale<<<1, 32>>>(x, 3.0f32, n);
        } else {
            other: empty;
        }
        repeat: while again {
            cond deeper = 1;
            step: kernel kernels::Countdown<<<1, 1>>>(again, counter, visits);
            nested: if deeper { deep: kernel kernels::Scale<<<1, 32>>>(x, 1.0f32, n); }
            step -> nested;
        }
        choose: switch pick {
            0 => { c0: empty; }
            1 => { c1: fill y = 1.0f32; }
        }
        report: host move || println!("done");
        child: graph sub;
        rec: record ev;
        wt: wait ev;
        cap: unsafe capture(stream) |s| { let _ = s; Ok(()) };
        tmp: alloc f32[n];
        use_tmp: kernel kernels::Scale<<<1, 32>>>(tmp, 1.0f32, n);
        done: free tmp;
        #[escape]
        out: alloc f32[4];
        unfreed: alloc u8[16];
        alloc scratch: f32[n] {
            s1: kernel kernels::Iota<<<1, 32>>>(scratch, n);
            s2: kernel kernels::Scale<<<1, 32>>>(scratch, 1.0f32, n);
            s1 -> s2;
        }
        p1: kernel kernels::AddOne<<<1, 32>>>(x, n);
        p2: kernel kernels::PdlAddOne<<<1, 32>>>(x, n);
        p3: kernel kernels::PdlAddOne<<<1, 32>>>(x, n);
        load -> stage1 -> [zero, decide] -> branch -> repeat -> choose -> report;
        tmp -> use_tmp -> done;
        choose -> scratch -> child -> rec -> wt -> cap;
        out -> report;
        unfreed -> report;
        report -> p1 -(programmatic)-> p2 -(launch_order)-> p3;
    }
}

#[allow(dead_code)]
fn typed_exec<'a>(exec: &mut EverythingExec<'a>, x: graph_runtime::Buf<'a, f32>) -> graph_runtime::Result<()> {
    exec.stage1().set_args((x, 4.0, 16))?;
    exec.zero().set_enabled(true)?;
    exec.deep().set_enabled(false)?;
    Ok(())
}

fn main() {
    assert_eq!(Everything::LABELS[0], "load");
    assert!(Everything::LABELS.contains(&"deep"));
    assert!(Everything::DOT.starts_with("digraph \"Everything\""));
    assert!(Everything::DOT.contains("\"p1\" -> \"p2\" [style=dashed, label=\"programmatic\"];"));
    assert!(Everything::OPTIONS.auto_free_on_launch && Everything::OPTIONS.use_node_priority);
}
