// Statement-form graph memory: alloc, use, free, and an escaping allocation.
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    /// A launch configuration reads host values only: the length of an
    /// allocation already freed uses none of its memory.
    graph ConfigReadsLength(x: &mut CudaSlice<f32>, n: usize) {
        scratch: alloc f32[n];
        zero: fill scratch = 0.0f32;
        done: free scratch;
        after: kernel kernels::AddOne<<<(scratch.len() as u32).div_ceil(32), 32>>>(x, 32u32);
        scratch -> zero -> done -> after;
    }

    graph Memory(x: &CudaSlice<f32>, n: u32) {
        a: alloc f32[n];
        b: alloc f32[n];
        #[escape]
        result: alloc f32[n];
        fill_a: fill a = 1.0f32;
        fill_b: fill b = 2.0f32;
        add: kernel kernels::Add<<<1, 32>>>(a, b, result, n);
        scale: kernel kernels::Add<<<1, 32>>>(x, x, a, n);
        free_a: free a;
        free_b: free b;
        a -> fill_a -> add;
        b -> fill_b -> add;
        result -> add -> scale -> [free_a, free_b];
    }
}

#[allow(dead_code)]
fn escaped(graph: &Memory<'_>) -> u64 {
    graph.bound().result.device_ptr()
}

fn main() {
    assert_eq!(Memory::LABELS.len(), 9);
}
