// Allocation lengths of any integer type, and references to one.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Lengths(a: u32, b: &usize, c: i64, d: u8) {
        x: alloc f32[a];
        y: alloc f64[b];
        z: alloc u32[c];
        alloc w: i32[d] { e: empty; }
        fx: free x;
        fy: free y;
        fz: free z;
        x -> fx;
        y -> fy;
        z -> fz;
    }
}

fn main() {}
