// A node written without its label, as a newcomer might (`while h { .. }`,
// `kernel K<<<..>>>(..);`): an error at its keyword asking for the label,
// and the statements after it still parsed (the unknown node `typo` in
// the edge below is not reported: parse errors come first).
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Unlabeled(
        x: &mut graph_runtime::cudarc::driver::CudaSlice<f32>,
        counter: &mut graph_runtime::cudarc::driver::CudaSlice<i32>,
        n: u32,
    ) {
        cond again = 1;
        while again {
            step: kernel kernels::CountdownStep<<<1, 1>>>(again, counter);
        }
        kernel kernels::AddOne<<<1, 32>>>(x, n);
        done: empty;
        alloc scratch: f32[4];
        typo -> done;
    }
}

fn main() {}
