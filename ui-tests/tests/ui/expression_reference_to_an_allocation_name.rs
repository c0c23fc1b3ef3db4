// In the expression form, `&mut tmp` binds the caller's `tmp`; when the
// graph also allocates `tmp`, that is refused at the operand (it silently
// wrote the caller's variable while the checker reasoned about the
// allocation).
use graph_runtime::cuda_graph;

fn main() {
    let ctx = graph_runtime::driver::context(0).unwrap();
    let stream = ctx.new_stream().unwrap();
    let mut tmp = stream.alloc_zeros::<f32>(32).unwrap();
    let n = 32u32;
    let _graph = cuda_graph!(graph(&ctx) {
        tmp: alloc f32[n];
        k: kernel kernels::AddOne<<<1, 32>>>(&mut tmp, n);
        done: free tmp;
        tmp -> k -> done;
    });
}
