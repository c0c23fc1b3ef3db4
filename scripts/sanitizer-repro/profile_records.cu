// Does compute-sanitizer's racecheck corrupt its own heap on the graph that
// examples/profile.rs profiles? In plain CUDA C++ (no Rust, no
// graph-runtime): the example's Pipeline graph (seed -> [left, right]; a
// memset and left -> a WHILE running three times (slow fill, scale,
// countdown); [WHILE, right] -> combine), launched once plainly, then once
// more as graph-runtime's profile launches it:
//
//   mode 0: no record nodes: the second launch is a plain one
//   mode 1: an event-record node before and after every top-level node,
//           kept in the graph until the exec is destroyed
//   mode 2: as mode 1, the record nodes destroyed right after the
//           instantiation (as `Graph::profile` does), then upload, launch
//
// Each mode checks x = 2 * 1.5^3 + 3 = 9.75 and six loop iterations, and
// exits with the primary context still held (as the Rust example does: its
// module cache keeps it).
//
//   nvcc -O2 -arch=sm_90 -o profile_records profile_records.cu -lcuda
//   for i in $(seq 80); do MALLOC_CHECK_=3 compute-sanitizer --tool racecheck \
//     ./profile_records MODE > log 2>&1 || { echo "run $i failed"; tail -3 log; }; done
//
// The question (tests/README.md): the Rust example dies under racecheck
// now and then (a glibc heap abort on a thread of the tool's
// libsanitizer-collection.so, or SIGSEGV).
//
// Answer, measured on the lent H200 (2026-12-04, compute-sanitizer
// 2025.3.1, CUDA 13 driver): this program, modes 1 and 2 alternating, one
// run at a time, died in 3 of 98 racecheck runs (`double free or
// corruption (out)`, `free(): corrupted unsorted chunks`, SIGSEGV), as the
// Rust example did in 6 of 133 and 1 of 81 runs the same day. Both ran
// clean in 60 + 24 runs per mode when eight ran at once. The corruption is
// the tool's. (Mode 0, one at a time, was not run: the device time was
// spent.)
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t ck_ = (x); if (ck_ != cudaSuccess) { printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(ck_)); exit(1);} } while (0)

__global__ void iota(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = (float)i;
}

// Spins about `spin` clocks, then writes `value` (kernels/cuda's slow_fill).
__global__ void slow_fill(float* x, float value, unsigned n, long long spin) {
    long long start = clock64();
    while (clock64() - start < spin) {}
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = value;
}

__global__ void scale(float* x, float by, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= by;
}

// Counts an iteration; the loop goes on while the counter stays above 0.
__global__ void countdown(cudaGraphConditionalHandle h, int* counter, int* iterations) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        int left = --*counter;
        ++*iterations;
        cudaGraphSetConditional(h, left > 0 ? 1u : 0u);
    }
}

__global__ void add(const float* a, const float* b, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

static cudaGraphNode_t kernel(cudaGraph_t g, std::vector<cudaGraphNode_t> deps, void* func,
                              unsigned blocks, unsigned threads, void** args) {
    cudaKernelNodeParams p = {};
    p.func = func;
    p.gridDim = dim3(blocks);
    p.blockDim = dim3(threads);
    p.kernelParams = args;
    cudaGraphNode_t node;
    CK(cudaGraphAddKernelNode(&node, g, deps.data(), deps.size(), &p));
    return node;
}

static cudaGraphNode_t record(cudaGraph_t g, std::vector<cudaGraphNode_t> deps, cudaEvent_t e) {
    cudaGraphNode_t node;
    CK(cudaGraphAddEventRecordNode(&node, g, deps.data(), deps.size(), e));
    return node;
}

int main(int argc, char** argv) {
    int mode = argc > 1 ? atoi(argv[1]) : 2;
    const unsigned n = 1u << 16, threads = 256, blocks = (n + threads - 1) / threads;
    long long spin = 300000, spin3 = 3 * spin;
    float two = 2.0f, three = 3.0f, four = 4.0f, grow = 1.5f;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float *x, *y, *z, *w;
    int *counter, *iterations;
    for (float** p : {&x, &y, &z, &w}) CK(cudaMalloc(p, n * sizeof(float)));
    CK(cudaMalloc(&counter, sizeof(int)));
    CK(cudaMalloc(&iterations, sizeof(int)));
    CK(cudaMemset(iterations, 0, sizeof(int)));

    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));
    cudaGraphConditionalHandle h;
    CK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
    cudaMemsetParams m = {};
    m.dst = counter; m.value = 3; m.elementSize = 4; m.width = 1; m.height = 1;
    cudaGraphNode_t reset;
    CK(cudaGraphAddMemsetNode(&reset, g, nullptr, 0, &m));
    void* seed_args[] = {&x, (void*)&n};
    cudaGraphNode_t seed = kernel(g, {}, (void*)iota, blocks, threads, seed_args);
    void* left_args[] = {&y, &two, (void*)&n, &spin};
    cudaGraphNode_t left = kernel(g, {seed}, (void*)slow_fill, blocks, threads, left_args);
    void* right_args[] = {&z, &three, (void*)&n, &spin3};
    cudaGraphNode_t right = kernel(g, {seed}, (void*)slow_fill, blocks, threads, right_args);
    cudaGraphNodeParams cp = {};
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = h;
    cp.conditional.type = cudaGraphCondTypeWhile;
    cp.conditional.size = 1;
    cudaGraphNode_t pre[] = {left, reset};
    cudaGraphNode_t refine;
    CK(cudaGraphAddNode(&refine, g, pre, nullptr, 2, &cp));
    cudaGraph_t body = cp.conditional.phGraph_out[0];
    void* slow_args[] = {&w, &four, (void*)&n, &spin};
    cudaGraphNode_t slow = kernel(body, {}, (void*)slow_fill, blocks, threads, slow_args);
    void* grow_args[] = {&y, &grow, (void*)&n};
    cudaGraphNode_t grown = kernel(body, {slow}, (void*)scale, blocks, threads, grow_args);
    void* step_args[] = {&h, &counter, &iterations};
    kernel(body, {grown}, (void*)countdown, 1, 1, step_args);
    void* combine_args[] = {&y, &z, &x, (void*)&n};
    cudaGraphNode_t combine = kernel(g, {refine, right}, (void*)add, blocks, threads, combine_args);

    // The first, plain launch (the example's, before profiling).
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, g, 0));
    CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaGraphExecDestroy(exec));

    // The profiling launch: a record before (after the node's dependencies)
    // and after every top-level node.
    std::vector<cudaEvent_t> events;
    std::vector<cudaGraphNode_t> records;
    if (mode != 0) {
        struct Top { cudaGraphNode_t node; std::vector<cudaGraphNode_t> deps; };
        std::vector<Top> top = {{reset, {}}, {seed, {}}, {left, {seed}}, {right, {seed}},
                                {refine, {left, reset}}, {combine, {refine, right}}};
        for (const Top& t : top) {
            cudaEvent_t started, done;
            CK(cudaEventCreate(&started));
            CK(cudaEventCreate(&done));
            events.push_back(started);
            events.push_back(done);
            records.push_back(record(g, t.deps, started));
            records.push_back(record(g, {t.node}, done));
        }
    }
    CK(cudaGraphInstantiate(&exec, g, 0));
    if (mode == 2) {
        for (auto it = records.rbegin(); it != records.rend(); ++it) CK(cudaGraphDestroyNode(*it));
        records.clear();
    }
    CK(cudaGraphUpload(exec, s));
    CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaGraphExecDestroy(exec));
    for (cudaGraphNode_t r : records) CK(cudaGraphDestroyNode(r));
    float elapsed = 0.0f;
    if (mode != 0) CK(cudaEventElapsedTime(&elapsed, events.front(), events.back()));
    for (cudaEvent_t e : events) CK(cudaEventDestroy(e));
    CK(cudaGraphDestroy(g));

    std::vector<float> host(n);
    int loops = 0;
    CK(cudaMemcpy(host.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&loops, iterations, sizeof(int), cudaMemcpyDeviceToHost));
    bool ok = loops == 6;
    for (float v : host) ok = ok && v == 2.0f * 1.5f * 1.5f * 1.5f + 3.0f;
    printf("mode %d: x[0] = %.2f (want 9.75), %d iterations (want 6), %.3f ms recorded: %s\n",
           mode, host[0], loops, elapsed, ok ? "ok" : "WRONG");
    // Exits with the buffers, the stream and the primary context held.
    return ok ? 0 : 1;
}
