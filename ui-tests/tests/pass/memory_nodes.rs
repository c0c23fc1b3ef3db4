// Statement-form graph memory: alloc, use, free, and an escaping allocation.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Memory(n: usize) {
        a: alloc f32[n];
        b: alloc f32[n];
        #[escape]
        result: alloc f32[1];
        fill_a: fill a = 1.0f32;
        add: kernel kernels::ADD<<<1, 32>>>(a, b, result);
        free_a: free a;
        free_b: free b;
        a -> fill_a -> add;
        [b, result] -> add;
        add -> [free_a, free_b];
    }
}

fn main() {
    assert_eq!(Memory::LABELS.len(), 7);
}
