// A host node whose closure uses a parameter the graph borrows: one error
// at the use, saying why (the closure runs after the launch call returns)
// and what to do, not rustc's "borrowed data escapes" over the invocation.
use graph_runtime::cuda_graph;

cuda_graph! {
    graph Report(data: &[f32]) {
        show: host move || println!("{}", data[0]);
    }
}

fn main() {}
