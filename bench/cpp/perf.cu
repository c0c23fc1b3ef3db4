// The C++ (CUDA runtime API) baseline of the graph benchmarks. The Rust
// benchmark compiles it with nvcc at run time (when nvcc is found) into a
// shared library and loads it into its own process, so the C++ graphs share
// the primary context with the Rust ones and every measurement can be
// interleaved with its Rust counterpart. Same shapes, same tiny kernel
// (1 block x 32 threads, x[i] += 1), same measurements; the buffers are the
// Rust side's, which checks what the kernels wrote.
//
// Every entry point returns 0, or 1 with the reason in perf_last_error().
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

static char last_error[512];

#define CHECK(x) do { cudaError_t check_status_ = (x); if (check_status_ != cudaSuccess) { \
    std::snprintf(last_error, sizeof last_error, "%s failed: %s", #x, cudaGetErrorString(check_status_)); \
    return 1; } } while (0)

__global__ void add_one(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

__global__ void countdown(cudaGraphConditionalHandle handle, int* counter) {
    if (threadIdx.x == 0) {
        *counter -= 1;
        cudaGraphSetConditional(handle, *counter > 0 ? 1u : 0u);
    }
}

__global__ void countdown_flag(int* counter, int* flag) {
    if (threadIdx.x == 0) { *counter -= 1; *flag = *counter > 0; }
}

using Clock = std::chrono::steady_clock;
static double us_since(Clock::time_point t) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}
static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Builds the width x length chains over bufs (one buffer per chain).
static int build_chains(int width, int length, float* const* bufs, cudaGraph_t* graph) {
    static unsigned n = 32;
    CHECK(cudaGraphCreate(graph, 0));
    for (int w = 0; w < width; ++w) {
        cudaGraphNode_t prev = nullptr;
        for (int l = 0; l < length; ++l) {
            void* args[] = {(void*)&bufs[w], &n};
            cudaKernelNodeParams p = {};
            p.func = (void*)add_one; p.gridDim = dim3(1); p.blockDim = dim3(32);
            p.kernelParams = args;
            cudaGraphNode_t node;
            CHECK(cudaGraphAddKernelNode(&node, *graph, prev ? &prev : nullptr, prev ? 1 : 0, &p));
            prev = node;
        }
    }
    return 0;
}

extern "C" const char* perf_last_error() { return last_error; }

// One timed build and one timed instantiation of the chains; both destroyed.
extern "C" int perf_build(int width, int length, float* const* bufs, double* build_us, double* inst_us) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    auto t = Clock::now();
    if (build_chains(width, length, bufs, &graph)) return 1;
    *build_us = us_since(t);
    t = Clock::now();
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    *inst_us = us_since(t);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    return 0;
}

// One exec of the chains with its own stream and events, for the Rust side
// to create in turn with its own execs (so that all variants' execs are
// placed alike) and to time with `perf_exec_time`.
struct PerfExec {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaStream_t stream;
    cudaEvent_t a, b;
};

extern "C" int perf_exec_new(int width, int length, float* const* bufs, PerfExec** out) {
    PerfExec* e = new PerfExec{};
    CHECK(cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&e->a)); CHECK(cudaEventCreate(&e->b));
    if (build_chains(width, length, bufs, &e->graph)) return 1;
    CHECK(cudaGraphInstantiate(&e->exec, e->graph, 0));
    *out = e;
    return 0;
}

// Upload, first launch, then `reps` timed launches after 3 warm-ups.
// out: upload, first launch, launch (host median), device (event median),
// us for the whole graph. Each buffer receives 4 + reps rounds.
extern "C" int perf_exec_time(PerfExec* e, int reps, double* out) {
    auto t = Clock::now();
    CHECK(cudaGraphUpload(e->exec, e->stream)); CHECK(cudaStreamSynchronize(e->stream));
    out[0] = us_since(t);
    t = Clock::now();
    CHECK(cudaGraphLaunch(e->exec, e->stream)); CHECK(cudaStreamSynchronize(e->stream));
    out[1] = us_since(t);
    for (int i = 0; i < 3; ++i) CHECK(cudaGraphLaunch(e->exec, e->stream));
    CHECK(cudaStreamSynchronize(e->stream));
    std::vector<double> launches, device;
    for (int i = 0; i < reps; ++i) {
        t = Clock::now();
        CHECK(cudaEventRecord(e->a, e->stream));
        CHECK(cudaGraphLaunch(e->exec, e->stream));
        CHECK(cudaEventRecord(e->b, e->stream));
        CHECK(cudaStreamSynchronize(e->stream));
        launches.push_back(us_since(t));
        float ms; CHECK(cudaEventElapsedTime(&ms, e->a, e->b)); device.push_back(ms * 1000.0);
    }
    out[2] = median(launches);
    out[3] = median(device);
    return 0;
}

extern "C" int perf_exec_free(PerfExec* e) {
    CHECK(cudaGraphExecDestroy(e->exec)); CHECK(cudaGraphDestroy(e->graph));
    CHECK(cudaEventDestroy(e->a)); CHECK(cudaEventDestroy(e->b));
    CHECK(cudaStreamDestroy(e->stream));
    delete e;
    return 0;
}

// The same kernels on streams (chain w on stream w; 3 warm-up rounds, `reps`
// timed). out: host, device (us, whole graph). Each buffer receives
// 3 + reps rounds of `length` increments.
extern "C" int perf_streams(int width, int length, float* const* bufs, int reps, double* out) {
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b));
    auto t = Clock::now();
    std::vector<cudaStream_t> streams(width);
    for (auto& s : streams) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> done(width);
    for (auto& e : done) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    std::vector<double> stream_host, stream_device;
    unsigned n = 32;
    for (int i = 0; i < reps + 3; ++i) {
        t = Clock::now();
        CHECK(cudaEventRecord(a, streams[0]));
        for (int w = 1; w < width; ++w) CHECK(cudaStreamWaitEvent(streams[w], a, 0));
        for (int l = 0; l < length; ++l)
            for (int w = 0; w < width; ++w) add_one<<<1, 32, 0, streams[w]>>>(bufs[w], n);
        for (int w = 1; w < width; ++w) { CHECK(cudaEventRecord(done[w], streams[w])); CHECK(cudaStreamWaitEvent(streams[0], done[w], 0)); }
        CHECK(cudaEventRecord(b, streams[0]));
        CHECK(cudaStreamSynchronize(streams[0]));
        if (i >= 3) {
            stream_host.push_back(us_since(t));
            float ms; CHECK(cudaEventElapsedTime(&ms, a, b)); stream_device.push_back(ms * 1000.0);
        }
    }
    CHECK(cudaGetLastError());
    out[0] = median(stream_host);
    out[1] = median(stream_device);
    for (auto& s : streams) CHECK(cudaStreamDestroy(s));
    for (auto& e : done) CHECK(cudaEventDestroy(e));
    CHECK(cudaEventDestroy(a)); CHECK(cudaEventDestroy(b));
    return 0;
}

// The loop workload: a device WHILE whose body counts `counter` down, and a
// host loop of one-kernel graph launches that copies a flag back each step.
struct Loop {
    cudaStream_t stream;
    cudaGraph_t graph, step_graph;
    cudaGraphExec_t exec, step_exec;
    int* counter;
    int* flag;
};

extern "C" int perf_loop_new(int* counter, int* flag, Loop** out) {
    Loop* loop = new Loop{};
    loop->counter = counter; loop->flag = flag;
    CHECK(cudaStreamCreateWithFlags(&loop->stream, cudaStreamNonBlocking));
    CHECK(cudaGraphCreate(&loop->graph, 0));
    cudaGraphConditionalHandle handle;
    CHECK(cudaGraphConditionalHandleCreate(&handle, loop->graph, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams cp = {};
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = handle; cp.conditional.type = cudaGraphCondTypeWhile; cp.conditional.size = 1;
    cudaGraphNode_t cond;
#if CUDART_VERSION >= 13000
    CHECK(cudaGraphAddNode(&cond, loop->graph, nullptr, nullptr, 0, &cp));
#else
    CHECK(cudaGraphAddNode(&cond, loop->graph, nullptr, 0, &cp));
#endif
    cudaGraph_t body = cp.conditional.phGraph_out[0];
    void* args[] = {&handle, &loop->counter};
    cudaKernelNodeParams kp = {};
    kp.func = (void*)countdown; kp.gridDim = dim3(1); kp.blockDim = dim3(32); kp.kernelParams = args;
    cudaGraphNode_t k; CHECK(cudaGraphAddKernelNode(&k, body, nullptr, 0, &kp));
    CHECK(cudaGraphInstantiate(&loop->exec, loop->graph, 0));
    CHECK(cudaGraphCreate(&loop->step_graph, 0));
    void* sargs[] = {&loop->counter, &loop->flag};
    kp.func = (void*)countdown_flag; kp.kernelParams = sargs;
    CHECK(cudaGraphAddKernelNode(&k, loop->step_graph, nullptr, 0, &kp));
    CHECK(cudaGraphInstantiate(&loop->step_exec, loop->step_graph, 0));
    *out = loop;
    return 0;
}

// One run of each loop over `steps` steps: us for the WHILE, us for the
// host loop. Fails if either did not run exactly `steps` steps.
extern "C" int perf_loop_run(Loop* loop, int steps, double* while_us, double* host_us) {
    CHECK(cudaMemcpy(loop->counter, &steps, sizeof(int), cudaMemcpyHostToDevice));
    auto t = Clock::now();
    CHECK(cudaGraphLaunch(loop->exec, loop->stream)); CHECK(cudaStreamSynchronize(loop->stream));
    *while_us = us_since(t);
    int left = -1; CHECK(cudaMemcpy(&left, loop->counter, sizeof(int), cudaMemcpyDeviceToHost));
    if (left != 0) { std::snprintf(last_error, sizeof last_error, "WHILE left %d steps", left); return 1; }
    CHECK(cudaMemcpy(loop->counter, &steps, sizeof(int), cudaMemcpyHostToDevice));
    int host_flag = 0, done_steps = 0;
    t = Clock::now();
    do {
        CHECK(cudaGraphLaunch(loop->step_exec, loop->stream));
        CHECK(cudaMemcpyAsync(&host_flag, loop->flag, sizeof(int), cudaMemcpyDeviceToHost, loop->stream));
        CHECK(cudaStreamSynchronize(loop->stream));
        ++done_steps;
    } while (host_flag);
    *host_us = us_since(t);
    if (done_steps != steps) { std::snprintf(last_error, sizeof last_error, "host loop ran %d steps", done_steps); return 1; }
    return 0;
}

extern "C" int perf_loop_free(Loop* loop) {
    CHECK(cudaGraphExecDestroy(loop->exec)); CHECK(cudaGraphExecDestroy(loop->step_exec));
    CHECK(cudaGraphDestroy(loop->graph)); CHECK(cudaGraphDestroy(loop->step_graph));
    CHECK(cudaStreamDestroy(loop->stream));
    delete loop;
    return 0;
}

// The launch loop: `iters` iterations of [update,] launch, copy bufs[0][0]
// back (4 bytes) and synchronize, on the exec's stream; the time of each
// iteration into us[i]. mode 0: launch only; 1: a per-node update of the
// first kernel's arguments (the same arguments) before each launch; 2: the
// graph rebuilt and the exec updated from it (whole-graph) before each
// launch. Fails unless the copied value counts every launch (from `start`).
extern "C" int perf_exec_loop(PerfExec* e, int width, float* const* bufs, int mode, int iters,
                              float start, double* us) {
    static unsigned n = 32;
    size_t count = 0;
    CHECK(cudaGraphGetNodes(e->graph, nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    CHECK(cudaGraphGetNodes(e->graph, nodes.data(), &count));
    void* args[] = {(void*)&bufs[0], &n};
    cudaKernelNodeParams p = {};
    p.func = (void*)add_one; p.gridDim = dim3(1); p.blockDim = dim3(32); p.kernelParams = args;
    float value = 0.0f;
    for (int i = 0; i < iters; ++i) {
        auto t = Clock::now();
        if (mode == 1) CHECK(cudaGraphExecKernelNodeSetParams(e->exec, nodes[0], &p));
        if (mode == 2) {
            cudaGraph_t rebuilt;
            if (build_chains(width, 1, bufs, &rebuilt)) return 1;
            cudaGraphExecUpdateResultInfo info;
            CHECK(cudaGraphExecUpdate(e->exec, rebuilt, &info));
            CHECK(cudaGraphDestroy(rebuilt));
        }
        CHECK(cudaGraphLaunch(e->exec, e->stream));
        CHECK(cudaMemcpyAsync(&value, bufs[0], sizeof(float), cudaMemcpyDeviceToHost, e->stream));
        CHECK(cudaStreamSynchronize(e->stream));
        us[i] = us_since(t);
        if (value != start + (float)(i + 1)) {
            std::snprintf(last_error, sizeof last_error, "launch loop read %f, not %f", value, start + (float)(i + 1));
            return 1;
        }
    }
    return 0;
}

// The Jacobi solver of examples/jacobi.rs, with nvcc's code (the kernels
// are kernels/cuda/jacobi.cu's, as CUDA runtime code).
__global__ void jacobi_sweep(const float* u, const float* f, float* out, unsigned width, float h2, unsigned len) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len || width == 0) return;
    unsigned row = i / width, col = i % width, rows = len / width;
    if (row == 0 || col == 0 || row + 1 >= rows || col + 1 == width) { out[i] = 0.0f; return; }
    out[i] = 0.25f * (u[i - 1] + u[i + 1] + u[i - width] + u[i + width] + h2 * f[i]);
}

__global__ void sq_diff_sum(const float* a, const float* b, double* out, unsigned len) {
    if (blockDim.x % 32 != 0 || blockDim.y * blockDim.z != 1) return;
    double acc = 0.0;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < len; i += gridDim.x * blockDim.x) {
        double d = (double)a[i] - (double)b[i];
        acc += d * d;
    }
    for (unsigned o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if (threadIdx.x % 32 == 0) atomicAdd(out, acc);
}

__global__ void jacobi_continue(cudaGraphConditionalHandle handle, const double* residual,
                                unsigned* iterations, double tol2, unsigned limit) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    unsigned done = *iterations + 1;
    *iterations = done;
    cudaGraphSetConditional(handle, (*residual > tol2 && done < limit) ? 1u : 0u);
}

// Adds reset, two sweeps and the norm (and, with a handle, the test) to g.
static int jacobi_nodes(cudaGraph_t g, float** u, float** v, float** f, double** residual, unsigned** iterations,
                        unsigned* width, float* h2, unsigned* len, cudaGraphConditionalHandle* handle,
                        double* tol2, unsigned* limit) {
    cudaMemsetParams m = {};
    m.dst = *residual; m.elementSize = 4; m.width = 2; m.height = 1; m.value = 0;
    cudaGraphNode_t reset, forth, back, norm, test;
    CHECK(cudaGraphAddMemsetNode(&reset, g, nullptr, 0, &m));
    unsigned blocks = (*len + 255) / 256, norm_blocks = blocks < 264 ? blocks : 264;
    void* fa[] = {u, f, v, width, h2, len};
    cudaKernelNodeParams p = {};
    p.func = (void*)jacobi_sweep; p.gridDim = dim3(blocks); p.blockDim = dim3(256); p.kernelParams = fa;
    CHECK(cudaGraphAddKernelNode(&forth, g, nullptr, 0, &p));
    void* ba[] = {v, f, u, width, h2, len};
    p.kernelParams = ba;
    CHECK(cudaGraphAddKernelNode(&back, g, &forth, 1, &p));
    void* na[] = {u, v, residual, len};
    p.func = (void*)sq_diff_sum; p.gridDim = dim3(norm_blocks); p.kernelParams = na;
    cudaGraphNode_t before_norm[] = {back, reset};
    CHECK(cudaGraphAddKernelNode(&norm, g, before_norm, 2, &p));
    if (handle) {
        void* ta[] = {handle, residual, iterations, tol2, limit};
        p.func = (void*)jacobi_continue; p.gridDim = dim3(1); p.blockDim = dim3(1); p.kernelParams = ta;
        CHECK(cudaGraphAddKernelNode(&test, g, &norm, 1, &p));
    }
    return 0;
}

// Solves from u = v = 0: device_loop 0 is the host loop (launch, copy the
// norm back, decide), 1 the WHILE graph. The exec is built, instantiated and
// uploaded first; `us` times the solve alone. steps: the steps it took.
extern "C" int perf_jacobi(int device_loop, unsigned width, float h2, unsigned len, float* u, float* v, float* f,
                           double* residual, unsigned* iterations, double tol2, unsigned limit,
                           double* us, unsigned* steps) {
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK(cudaMemsetAsync(u, 0, len * sizeof(float), stream));
    CHECK(cudaMemsetAsync(v, 0, len * sizeof(float), stream));
    CHECK(cudaMemsetAsync(iterations, 0, sizeof(unsigned), stream));
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    if (device_loop) {
        cudaGraphConditionalHandle handle;
        CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault));
        cudaGraphNodeParams cp = {};
        cp.type = cudaGraphNodeTypeConditional;
        cp.conditional.handle = handle; cp.conditional.type = cudaGraphCondTypeWhile; cp.conditional.size = 1;
        cudaGraphNode_t cond;
#if CUDART_VERSION >= 13000
        CHECK(cudaGraphAddNode(&cond, graph, nullptr, nullptr, 0, &cp));
#else
        CHECK(cudaGraphAddNode(&cond, graph, nullptr, 0, &cp));
#endif
        if (jacobi_nodes(cp.conditional.phGraph_out[0], &u, &v, &f, &residual, &iterations, &width, &h2, &len,
                         &handle, &tol2, &limit)) return 1;
    } else {
        if (jacobi_nodes(graph, &u, &v, &f, &residual, &iterations, &width, &h2, &len, nullptr, &tol2, &limit))
            return 1;
    }
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphUpload(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    auto t = Clock::now();
    if (device_loop) {
        CHECK(cudaGraphLaunch(exec, stream));
        CHECK(cudaMemcpyAsync(steps, iterations, sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
        CHECK(cudaStreamSynchronize(stream));
    } else {
        double norm2 = 0.0;
        unsigned done = 0;
        do {
            CHECK(cudaGraphLaunch(exec, stream));
            CHECK(cudaMemcpyAsync(&norm2, residual, sizeof(double), cudaMemcpyDeviceToHost, stream));
            CHECK(cudaStreamSynchronize(stream));
            ++done;
        } while (norm2 > tol2 && done < limit);
        *steps = done;
    }
    *us = us_since(t);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaStreamDestroy(stream));
    return 0;
}
