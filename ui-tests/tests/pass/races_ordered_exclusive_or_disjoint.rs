// Accesses that do not race: ordered by a path, readers only, two branches
// of one `if`, arms of one `switch`, and deliberate disjoint writes marked
// `#[disjoint]` (on a node, or on a conditional node for its bodies).
use graph_runtime::cuda_graph;
use graph_runtime::cudarc::driver::CudaSlice;

cuda_graph! {
    graph Fine(a: &mut CudaSlice<f32>, b: &CudaSlice<f32>, out: &mut CudaSlice<f32>, visits: &mut CudaSlice<i32>, n: u32) {
        cond go;
        cond pick;
        // Ordered writers of `a`; unordered readers of `b`.
        zero: fill a = 0.0f32;
        one: kernel kernels::AddOne<<<1, 32>>>(a, n);
        sum: kernel kernels::Add<<<1, 32>>>(b, b, out, n);
        copy_b: copy b => a;
        zero -> one -> copy_b;
        set: kernel kernels::SetCondition<<<1, 1>>>(go, n);
        choose: kernel kernels::SetCondition<<<1, 1>>>(pick, n);
        branch: if go {
            then_mark: kernel kernels::Mark<<<1, 1>>>(visits, 0u32);
        } else {
            else_mark: kernel kernels::Mark<<<1, 1>>>(visits, 1u32);
        }
        #[disjoint(visits)]
        arms: switch pick {
            0 => { arm0: kernel kernels::Mark<<<1, 1>>>(visits, 2u32); }
            1 => { arm1: kernel kernels::Mark<<<1, 1>>>(visits, 3u32); }
        }
        #[disjoint]
        left: kernel kernels::Scale<<<1, 32>>>(out, 2.0f32, n);
        sum -> left;
        set -> branch;
        choose -> arms;
    }
}

fn main() {}
