// Does compute-sanitizer's synccheck report a block-wide tree reduction as
// "Barrier error detected. Divergent thread(s) in warp"? In plain CUDA C++
// (no Rust, no graph-runtime): kernels/cuda/jacobi.cu's sq_diff_sum and
// kernels/cuda/reduce.cu's reduce_partial, the same pattern (grid-stride sum,
// __syncthreads, halving loop with a __syncthreads per step), run on 4,096
// floats as 16 blocks of 256 threads, as examples/jacobi.rs runs sq_diff_sum.
//
//   mode 0: the kernels compiled by nvcc into this binary, stream launches
//   mode 1: the same kernels in a captured graph, launched twice
//   mode 2: the repository's .cu files compiled by NVRTC for compute_90 (as
//           graph-runtime compiles them), loaded with cuModuleLoadData,
//           launched with cuLaunchKernel
//   mode 3: sq_diff_sum in the body of a WHILE node that runs 3 times (the
//           body's last kernel counts down and sets the condition)
//
//   nvcc -O2 -arch=sm_90 -o barrier barrier.cu -lnvrtc -lcuda
//   compute-sanitizer --tool synccheck ./barrier MODE [REPO_ROOT]
//
// Measured on the lent H200 (compute-sanitizer 2025.3.1, CUDA 13 driver),
// 2026-12-02: every mode prints exact sums; under synccheck, modes 0, 1 and 2
// report 0 errors, mode 3 reports "Barrier error detected. Divergent
// thread(s) in warp." at sq_diff_sum+0x270 (its first __syncthreads), for
// the threads of one block. examples/jacobi.rs, which runs sq_diff_sum in a
// WHILE body, got the same report, and under synccheck its launch failed
// (CUDA_ERROR_LAUNCH_FAILED; it runs correctly without the tool); its
// sq_diff_sum now sums with warp shuffles and atomics, without a barrier.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvrtc.h>
#include "nvrtc_module.h"
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); exit(1);} } while (0)
#define CU(x) do { CUresult e = (x); if (e != CUDA_SUCCESS) { const char* m; cuGetErrorString(e, &m); printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, m); exit(1);} } while (0)

__global__ void sq_diff_sum(const float* a, const float* b, double* out, unsigned len) {
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

__global__ void reduce_partial(const float* x, double* partial, unsigned n) {
    __shared__ double sums[256];
    if (blockDim.x > 256 || blockDim.y * blockDim.z != 1) return;
    double sum = 0.0;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum += x[i];
    sums[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sums[0];
}

__global__ void count_down(cudaGraphConditionalHandle h, unsigned* left) {
    if (threadIdx.x == 0 && blockIdx.x == 0) { unsigned l = --*left; cudaGraphSetConditional(h, l > 0 ? 1u : 0u); }
}

static std::string slurp(const std::string& path) {
    std::ifstream f(path);
    if (!f) { printf("cannot read %s\n", path.c_str()); exit(1); }
    std::stringstream s; s << f.rdbuf(); return s.str();
}

static CUfunction nvrtc_kernel(const std::string& path, const char* name) {
    std::string src = slurp(path);
    CUmodule m = nvrtc_module(src.c_str(), path.c_str());
    CUfunction f; CU(cuModuleGetFunction(&f, m, name));
    return f;
}

int main(int argc, char** argv) {
    int mode = argc > 1 ? atoi(argv[1]) : 0;
    std::string root = argc > 2 ? argv[2] : "../..";
    const unsigned N = 4096, BLOCKS = 16, THREADS = 256;
    CK(cudaFree(0));
    float *a, *b; double *out, *partial;
    CK(cudaMalloc(&a, N * sizeof(float))); CK(cudaMalloc(&b, N * sizeof(float)));
    CK(cudaMalloc(&out, sizeof(double))); CK(cudaMalloc(&partial, BLOCKS * sizeof(double)));
    std::vector<float> ha(N), hb(N);
    for (unsigned i = 0; i < N; i++) { ha[i] = (float)(i % 7); hb[i] = (float)(i % 5); }
    CK(cudaMemcpy(a, ha.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    double want = 0, want_sum = 0;
    for (unsigned i = 0; i < N; i++) { double d = (double)ha[i] - hb[i]; want += d * d; want_sum += ha[i]; }
    cudaStream_t s; CK(cudaStreamCreate(&s));
    CK(cudaMemsetAsync(out, 0, sizeof(double), s));
    unsigned n = N;
    if (mode == 0) {
        sq_diff_sum<<<BLOCKS, THREADS, 0, s>>>(a, b, out, n);
        reduce_partial<<<BLOCKS, THREADS, 0, s>>>(a, partial, n);
    } else if (mode == 1) {
        cudaGraph_t g; cudaGraphExec_t exec;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        sq_diff_sum<<<BLOCKS, THREADS, 0, s>>>(a, b, out, n);
        reduce_partial<<<BLOCKS, THREADS, 0, s>>>(a, partial, n);
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&exec, g, 0));
        CK(cudaGraphLaunch(exec, s));
        CK(cudaMemsetAsync(out, 0, sizeof(double), s));
        CK(cudaGraphLaunch(exec, s));
    } else if (mode == 3) {
        unsigned* left; CK(cudaMalloc(&left, sizeof(unsigned)));
        unsigned three = 3; CK(cudaMemcpy(left, &three, sizeof(unsigned), cudaMemcpyHostToDevice));
        cudaGraph_t g; CK(cudaGraphCreate(&g, 0));
        cudaGraphConditionalHandle h; CK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
        cudaGraphNodeParams cp = {}; cp.type = cudaGraphNodeTypeConditional;
        cp.conditional.handle = h; cp.conditional.type = cudaGraphCondTypeWhile; cp.conditional.size = 1;
        cudaGraphNode_t w; CK(cudaGraphAddNode(&w, g, nullptr, nullptr, 0, &cp));
        cudaGraph_t body = cp.conditional.phGraph_out[0];
        cudaKernelNodeParams kp = {}; kp.gridDim = dim3(BLOCKS); kp.blockDim = dim3(THREADS);
        void* sq_args[] = {&a, &b, &out, &n}; kp.func = (void*)sq_diff_sum; kp.kernelParams = sq_args;
        cudaGraphNode_t k1, k2; CK(cudaGraphAddKernelNode(&k1, body, nullptr, 0, &kp));
        void* cd_args[] = {&h, &left}; kp.func = (void*)count_down; kp.gridDim = dim3(1); kp.blockDim = dim3(1); kp.kernelParams = cd_args;
        CK(cudaGraphAddKernelNode(&k2, body, &k1, 1, &kp));
        cudaGraphExec_t exec; CK(cudaGraphInstantiate(&exec, g, 0));
        CK(cudaGraphLaunch(exec, s));
        CK(cudaStreamSynchronize(s));
        want *= 3;
        reduce_partial<<<BLOCKS, THREADS, 0, s>>>(a, partial, n);
    } else {
        CUfunction sq = nvrtc_kernel(root + "/kernels/cuda/jacobi.cu", "sq_diff_sum");
        CUfunction rp = nvrtc_kernel(root + "/kernels/cuda/reduce.cu", "reduce_partial");
        void* sq_args[] = {&a, &b, &out, &n};
        void* rp_args[] = {&a, &partial, &n};
        CU(cuLaunchKernel(sq, BLOCKS, 1, 1, THREADS, 1, 1, 0, (CUstream)s, sq_args, nullptr));
        CU(cuLaunchKernel(rp, BLOCKS, 1, 1, THREADS, 1, 1, 0, (CUstream)s, rp_args, nullptr));
    }
    CK(cudaStreamSynchronize(s));
    double got; std::vector<double> parts(BLOCKS);
    CK(cudaMemcpy(&got, out, sizeof(double), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(parts.data(), partial, BLOCKS * sizeof(double), cudaMemcpyDeviceToHost));
    double sum = 0; for (double p : parts) sum += p;
    bool ok = got == want && sum == want_sum;
    printf("mode %d: sq_diff_sum %.1f (want %.1f), reduce_partial %.1f (want %.1f): %s\n",
           mode, got, want, sum, want_sum, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
