// Fragments: declared once at the top, placed by name, never inside
// themselves; they hold no handle declarations and no graph memory; an
// edge inside one joins its own nodes.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Fragments(n: usize) {
        fragment looped {
            a: empty;
            again: use looped;
        }
        fragment owns {
            cond go;
            tmp: alloc f32[4];
            b: empty;
            b -> outside;
        }
        outside: empty;
        p: use looped;
        q: use owns;
        r: use missing;
        p -> q -> outside;
    }
}

fn main() {}
