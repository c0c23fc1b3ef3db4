// Jacobi iteration for -Laplace(u) = f on a grid of `width` columns and
// len / width rows, u = 0 on the boundary: the solver of the examples and
// the benchmark's time-to-solution rows.
extern "C" __device__ void cudaGraphSetConditional(unsigned long long handle, unsigned int value);

// One sweep: out = (the four neighbours of u + h2 * f) / 4 inside, 0 on the
// boundary. Touches index i < len only; an interior point's neighbours
// (i +- 1, i +- width) are inside the grid, so below len too.
extern "C" __global__ void jacobi_sweep(const float* u, const float* f, float* out,
                                        unsigned width, float h2, unsigned len) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len || width == 0) return;
    unsigned row = i / width, col = i % width, rows = len / width;
    if (row == 0 || col == 0 || row + 1 >= rows || col + 1 == width) {
        out[i] = 0.0f;
        return;
    }
    out[i] = 0.25f * (u[i - 1] + u[i + 1] + u[i - width] + u[i + width] + h2 * f[i]);
}

// *out += sum over i < len of (a[i] - b[i])^2, in double: each warp sums its
// lanes with shuffles and adds that with one atomicAdd (blocks of whole
// warps, one-dimensional; others return at once). The caller zeroes *out
// first. No block barrier: the solver runs it in a WHILE body, where
// compute-sanitizer's synccheck reports a __syncthreads as divergent and
// fails the launch (scripts/sanitizer-repro/barrier.cu).
extern "C" __global__ void sq_diff_sum(const float* a, const float* b, double* out, unsigned len) {
    if (blockDim.x % 32 != 0 || blockDim.y * blockDim.z != 1) return;
    double acc = 0.0;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += (unsigned long long)gridDim.x * blockDim.x) {
        double d = (double)a[i] - (double)b[i];
        acc += d * d;
    }
    for (unsigned o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if (threadIdx.x % 32 == 0) atomicAdd(out, acc);
}

// The device loop's test: counts an iteration and keeps the WHILE going
// while the squared update norm is above tol2 and fewer than `limit`
// iterations ran.
extern "C" __global__ void jacobi_continue(unsigned long long handle, const double* residual,
                                           unsigned* iterations, double tol2, unsigned limit) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    unsigned done = *iterations + 1;
    *iterations = done;
    cudaGraphSetConditional(handle, (*residual > tol2 && done < limit) ? 1u : 0u);
}
