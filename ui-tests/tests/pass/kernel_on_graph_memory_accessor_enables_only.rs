// A kernel whose arguments name graph memory that `bound()` does not hold
// (an alloc scope's buffer, an allocation that stays in the graph) keeps
// its arguments: its accessor is a `NodeMut`, with `set_enabled` alone, as
// a copy node's. A kernel over bound buffers and `#[escape]` allocations
// keeps `set_args`.
use graph_runtime::cudarc::driver::CudaSlice;
use graph_runtime::{cuda_graph, KernelNodeMutOf, NodeMut};

cuda_graph! {
    graph Scoped(out: &mut CudaSlice<f32>, n: u32) {
        alloc tmp: f32[n] {
            fill_tmp: kernel kernels::Iota<<<1, 32>>>(tmp, n);
            back: copy tmp => out;
            fill_tmp -> back;
        }
        kept: alloc f32[n];
        on_kept: kernel kernels::Iota<<<1, 32>>>(kept, n);
        done: free kept;
        #[escape]
        out_too: alloc f32[n];
        on_escaped: kernel kernels::Iota<<<1, 32>>>(out_too, n);
        on_out: kernel kernels::Scale<<<1, 32>>>(out, 2.0f32, n);
        tmp -> kept -> on_kept -> done;
        out_too -> on_escaped;
        back -> on_out;
    }
}

#[allow(dead_code)]
fn accessors(exec: &mut ScopedExec<'_>) {
    let _: NodeMut<'_, '_> = exec.fill_tmp();
    let _: NodeMut<'_, '_> = exec.on_kept();
    let _: KernelNodeMutOf<'_, '_, kernels::Iota> = exec.on_escaped();
    let _: KernelNodeMutOf<'_, '_, kernels::Scale> = exec.on_out();
}

fn main() {}
