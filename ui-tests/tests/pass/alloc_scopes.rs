// Alloc scopes, nested, with edges into and out of them.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Scoped(out: &mut CudaSlice<f32>, n: u32) {
        start: empty;
        alloc outer: f32[n] {
            k1: kernel kernels::Iota<<<1, 32>>>(outer, n);
            alloc inner: f32[n] {
                k2: kernel kernels::Add<<<1, 32>>>(outer, outer, inner, n);
                k3: copy inner => out;
                k2 -> k3;
            }
            k1 -> inner;
        }
        finish: empty;
        start -> outer -> finish;
    }
}

fn main() {
    assert_eq!(Scoped::LABELS, ["start", "k1", "k2", "k3", "finish"]);
    assert!(Scoped::DOT.contains("\"outer\" -> \"k1\" [style=dotted];"));
    assert!(Scoped::DOT.contains("\"inner.free\" -> \"outer.free\" [style=dotted];"));
}
