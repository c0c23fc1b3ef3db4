// The kernels the documentation's examples name as `kernels::...`
// (graph_runtime::__doc_kernels): small CUDA C kernels declared the way a
// user declares their own (see the crate docs, "Kernels of your own").

extern "C" __global__ void add(const float* a, const float* b, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

extern "C" __global__ void scale(float* x, float factor, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= factor;
}

extern "C" __global__ void add_one(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

extern "C" __global__ void iota(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = (float)i;
}

// One partial sum per block of at most 256 threads.
extern "C" __global__ void reduce_partial(const float* x, double* partial, unsigned n) {
    __shared__ double sums[256];
    if (blockDim.x > 256 || blockDim.y * blockDim.z != 1) return;
    double sum = 0.0;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        sum += x[i];
    sums[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sums[0];
}

// *out = the sum of partial[..count] (one block of at most 256 threads).
extern "C" __global__ void reduce_final(const double* partial, double* out, unsigned count) {
    __shared__ double sums[256];
    if (blockDim.x > 256 || blockDim.y * blockDim.z != 1) return;
    if (blockIdx.x != 0 || blockIdx.y != 0 || blockIdx.z != 0) return;  // block 0 writes out[0]
    double sum = 0.0;
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) sum += partial[i];
    sums[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = sums[0];
}

extern "C" __global__ void set_condition(cudaGraphConditionalHandle handle, unsigned value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(handle, value);
}

// WHILE body: counts an iteration and goes on while the counter is positive.
extern "C" __global__ void countdown(cudaGraphConditionalHandle handle, int* counter, int* iterations) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *iterations += 1;
        *counter -= 1;
        cudaGraphSetConditional(handle, *counter > 0 ? 1u : 0u);
    }
}

extern "C" __global__ void countdown_step(cudaGraphConditionalHandle handle, int* counter) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *counter -= 1;
        cudaGraphSetConditional(handle, *counter > 0 ? 1u : 0u);
    }
}

extern "C" __global__ void mark(int* visits, unsigned slot) {
    if (blockIdx.x == 0 && threadIdx.x == 0) visits[slot] += 1;
}

// PDL-aware: every thread waits for its predecessors before touching x.
extern "C" __global__ void pdl_add_one(float* x, unsigned n) {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
