// Does compute-sanitizer's racecheck fault graphs with conditional nodes
// launched from several host threads at once? In plain CUDA C++ (no Rust,
// no graph-runtime): THREADS threads, each with its own stream and buffers,
// for SECONDS seconds build a graph (a kernel, then a WHILE node whose body
// adds one to the buffer and counts down three times, then an IF node whose
// body adds ten), instantiate it, launch it, synchronize, check the buffer
// and destroy everything: the shape of graph-runtime's concurrency test
// (tests/gpu_concurrency.rs) with only the conditional part.
//
//   nvcc -O2 -arch=sm_90 -o cond_threads cond_threads.cu
//   compute-sanitizer --tool racecheck ./cond_threads THREADS SECONDS
//
// Measured on the lent H200: see the issue 15 note and BENCHMARKS.md's
// sanitizer section for what each thread count gave.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("thread %d: %s:%d %s: %s\n", id, __FILE__, __LINE__, #x, cudaGetErrorString(e)); exit(1);} } while (0)

const unsigned N = 1024;

__global__ void fill(float* x, float v, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}
__global__ void add(float* x, float v, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += v;
}
__global__ void count_down(cudaGraphConditionalHandle h, unsigned* left) {
    if (threadIdx.x == 0 && blockIdx.x == 0) { unsigned l = --*left; cudaGraphSetConditional(h, l > 0 ? 1u : 0u); }
}
__global__ void set_if(cudaGraphConditionalHandle h) {
    if (threadIdx.x == 0 && blockIdx.x == 0) cudaGraphSetConditional(h, 1u);
}

static cudaGraphNode_t kernel(int id, cudaGraph_t g, const cudaGraphNode_t* dep, void* f, void** args, unsigned grid, unsigned block) {
    cudaKernelNodeParams kp = {};
    kp.func = f; kp.gridDim = dim3(grid); kp.blockDim = dim3(block); kp.kernelParams = args;
    cudaGraphNode_t node; CK(cudaGraphAddKernelNode(&node, g, dep, dep ? 1 : 0, &kp));
    return node;
}

static cudaGraph_t conditional(int id, cudaGraph_t g, const cudaGraphNode_t* dep, cudaGraphConditionalHandle h,
                               cudaGraphConditionalNodeType type, cudaGraphNode_t* out) {
    cudaGraphNodeParams cp = {}; cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = h; cp.conditional.type = type; cp.conditional.size = 1;
    CK(cudaGraphAddNode(out, g, dep, nullptr, dep ? 1 : 0, &cp));
    return cp.conditional.phGraph_out[0];
}

static void worker(int id, double seconds, std::atomic<long>* cycles) {
    CK(cudaSetDevice(0));
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float* x; unsigned* left; CK(cudaMalloc(&x, N * sizeof(float))); CK(cudaMalloc(&left, sizeof(unsigned)));
    unsigned n = N;
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        unsigned three = 3;
        CK(cudaMemcpyAsync(left, &three, sizeof three, cudaMemcpyHostToDevice, s));
        cudaGraph_t g; CK(cudaGraphCreate(&g, 0));
        float zero = 0.0f, one = 1.0f, ten = 10.0f;
        void* fill_args[] = {&x, &zero, &n};
        cudaGraphNode_t first = kernel(id, g, nullptr, (void*)fill, fill_args, (N + 255) / 256, 256);
        cudaGraphConditionalHandle wh; CK(cudaGraphConditionalHandleCreate(&wh, g, 1, cudaGraphCondAssignDefault));
        cudaGraphNode_t loop; cudaGraph_t body = conditional(id, g, &first, wh, cudaGraphCondTypeWhile, &loop);
        void* add_args[] = {&x, &one, &n};
        cudaGraphNode_t step = kernel(id, body, nullptr, (void*)add, add_args, (N + 255) / 256, 256);
        void* cd_args[] = {&wh, &left};
        kernel(id, body, &step, (void*)count_down, cd_args, 1, 1);
        cudaGraphConditionalHandle ih; CK(cudaGraphConditionalHandleCreate(&ih, g, 0, 0));
        void* if_args[] = {&ih};
        cudaGraphNode_t set = kernel(id, g, &loop, (void*)set_if, if_args, 1, 1);
        cudaGraphNode_t when; cudaGraph_t then = conditional(id, g, &set, ih, cudaGraphCondTypeIf, &when);
        void* add10_args[] = {&x, &ten, &n};
        kernel(id, then, nullptr, (void*)add, add10_args, (N + 255) / 256, 256);
        cudaGraphExec_t exec; CK(cudaGraphInstantiate(&exec, g, 0));
        CK(cudaGraphLaunch(exec, s));
        std::vector<float> host(N);
        CK(cudaMemcpyAsync(host.data(), x, N * sizeof(float), cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        for (unsigned i = 0; i < N; i++)
            if (host[i] != 13.0f) { printf("thread %d: x[%u] = %f, want 13\n", id, i, host[i]); exit(1); }
        CK(cudaGraphExecDestroy(exec)); CK(cudaGraphDestroy(g));
        ++*cycles;
    }
    CK(cudaFree(x)); CK(cudaFree(left)); CK(cudaStreamDestroy(s));
}

int main(int argc, char** argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    double seconds = argc > 2 ? atof(argv[2]) : 8.0;
    int id = -1;
    CK(cudaFree(0));
    std::vector<std::atomic<long>> cycles(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) pool.emplace_back(worker, t, seconds, &cycles[t]);
    for (auto& t : pool) t.join();
    printf("%d threads, %.0f s: cycles", threads, seconds);
    for (auto& c : cycles) printf(" %ld", c.load());
    printf("; every result 13: ok\n");
    return 0;
}
