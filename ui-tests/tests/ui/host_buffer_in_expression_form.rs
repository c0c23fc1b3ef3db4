// Host buffers belong to named graphs: their exec hands them out.
use graph_runtime::cuda_graph;

fn main() {
    let ctx = graph_runtime::driver::context(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let x = stream.alloc_zeros::<f32>(4).unwrap();
    let _graph = cuda_graph!(graph(&ctx) {
        host seen: f32[4];
        down: copy &x => seen;
    });
}
