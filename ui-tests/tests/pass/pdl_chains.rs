//! Programmatic dependent launch edges: per arrow, and a whole chain marked
//! with one attribute; ordinary edges mix in.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Pdl(x: &mut CudaSlice<f32>, y: &mut CudaSlice<f32>) {
        a: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
        b: kernel kernels::PdlAddOne<<<1, 32>>>(x, 32u32);
        c: kernel kernels::PdlPrologueStep<<<1, 32>>>(x, 32u32, 8u32);
        d: kernel kernels::AddOne<<<1, 32>>>(x, 32u32);
        e: kernel kernels::PdlAddOne<<<1, 32>>>(y, 32u32);
        f: kernel kernels::PdlAddOne<<<1, 32>>>(y, 32u32);
        a -(programmatic)-> b -(launch_order)-> c -> d;
        #[launch_order]
        e -> f;
        d -> e;
    }
}

#[allow(dead_code)]
fn expression(ctx: &std::sync::Arc<graph_runtime::cudarc::driver::CudaContext>, mut x: CudaSlice<f32>) -> graph_runtime::Result<usize> {
    let graph = cuda_graph! {
        graph(ctx) {
            first: kernel kernels::PdlAddOne<<<1, 32>>>(&mut x, 32u32);
            second: kernel kernels::PdlAddOne<<<1, 32>>>(&mut x, 32u32);
            #[programmatic]
            first -> second;
        }
    }?;
    Ok(graph.node_count())
}

fn main() {
    assert!(Pdl::DOT.contains("launch_order"));
    assert!(Pdl::DOT.contains("programmatic"));
}
