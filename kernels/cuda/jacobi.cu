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

// *out += sum over i < len of (a[i] - b[i])^2, in double: a block-wide sum
// (at most 256 threads; larger blocks return at once), then one atomicAdd
// per block. The caller zeroes *out first.
extern "C" __global__ void sq_diff_sum(const float* a, const float* b, double* out, unsigned len) {
    __shared__ double part[256];
    if (blockDim.x > 256) return;
    double acc = 0.0;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < len; i += gridDim.x * blockDim.x) {
        double d = (double)a[i] - (double)b[i];
        acc += d * d;
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, part[0]);
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
