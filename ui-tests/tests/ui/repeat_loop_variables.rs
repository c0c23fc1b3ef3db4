// A loop variable is a variable of the builder: it must not hide an
// enclosing block's, a parameter, or a buffer.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Shadows(n: usize) {
        tmp: alloc f32[32];
        outer: for i in 0..n {
            inner: for i in 0..n {
                a: empty;
            }
        }
        params: for n in 0..4 {
            b: empty;
        }
        buffers: for tmp in 0..4 {
            c: empty;
        }
        done: free tmp;
        tmp -> [outer, params, buffers] -> done;
    }
}

fn main() {}
