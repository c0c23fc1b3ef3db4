// The C++ (CUDA runtime API) baseline of the graph benchmarks, compiled with
// nvcc at run time by the Rust benchmark when nvcc is found. Same shapes,
// same tiny kernel (1 block x 32 threads, x[i] += 1), same measurements.
//
//   perf scaling W L REPS   -> one line: build inst upload first launch device stream stream_device (us, whole graph)
//   perf loop STEPS REPS    -> one line: while_us host_loop_us (us, whole loop)
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(x) do { cudaError_t check_status_ = (x); if (check_status_ != cudaSuccess) { \
    std::fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(check_status_)); std::exit(1); } } while (0)

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

static int scaling(int width, int length, int reps) {
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::vector<float*> bufs(width);
    for (auto& b : bufs) { CHECK(cudaMalloc(&b, 32 * sizeof(float))); CHECK(cudaMemset(b, 0, 32 * sizeof(float))); }
    unsigned n = 32;
    std::vector<double> builds, insts;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    for (int r = 0; r < 5; ++r) {
        if (graph) CHECK(cudaGraphDestroy(graph));
        auto t = Clock::now();
        CHECK(cudaGraphCreate(&graph, 0));
        for (int w = 0; w < width; ++w) {
            cudaGraphNode_t prev = nullptr;
            for (int l = 0; l < length; ++l) {
                void* args[] = {&bufs[w], &n};
                cudaKernelNodeParams p = {};
                p.func = (void*)add_one; p.gridDim = dim3(1); p.blockDim = dim3(32);
                p.kernelParams = args;
                cudaGraphNode_t node;
                CHECK(cudaGraphAddKernelNode(&node, graph, prev ? &prev : nullptr, prev ? 1 : 0, &p));
                prev = node;
            }
        }
        builds.push_back(us_since(t));
        if (exec) CHECK(cudaGraphExecDestroy(exec));
        t = Clock::now();
        CHECK(cudaGraphInstantiate(&exec, graph, 0));
        insts.push_back(us_since(t));
    }
    auto t = Clock::now();
    CHECK(cudaGraphUpload(exec, stream)); CHECK(cudaStreamSynchronize(stream));
    double upload = us_since(t);
    t = Clock::now();
    CHECK(cudaGraphLaunch(exec, stream)); CHECK(cudaStreamSynchronize(stream));
    double first = us_since(t);
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b));
    for (int i = 0; i < 3; ++i) CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    std::vector<double> launches, device;
    for (int i = 0; i < reps; ++i) {
        t = Clock::now();
        CHECK(cudaEventRecord(a, stream));
        CHECK(cudaGraphLaunch(exec, stream));
        CHECK(cudaEventRecord(b, stream));
        CHECK(cudaStreamSynchronize(stream));
        launches.push_back(us_since(t));
        float ms; CHECK(cudaEventElapsedTime(&ms, a, b)); device.push_back(ms * 1000.0);
    }
    // Streams: chain w on stream w; the first stream waits for all at the end.
    std::vector<cudaStream_t> streams(width);
    for (auto& s : streams) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> done(width);
    for (auto& e : done) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    std::vector<double> stream_host, stream_device;
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
    std::printf("%f %f %f %f %f %f %f %f\n", median(builds), median(insts), upload, first,
                median(launches), median(device), median(stream_host), median(stream_device));
    return 0;
}

static int loop(int steps, int reps) {
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    int *counter, *flag, host_flag = 0;
    CHECK(cudaMalloc(&counter, sizeof(int))); CHECK(cudaMalloc(&flag, sizeof(int)));
    // Device WHILE: a conditional node whose body counts down.
    cudaGraph_t graph; CHECK(cudaGraphCreate(&graph, 0));
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
    cudaGraph_t body = cp.conditional.phGraph_out[0];
    void* args[] = {&handle, &counter};
    cudaKernelNodeParams kp = {};
    kp.func = (void*)countdown; kp.gridDim = dim3(1); kp.blockDim = dim3(32); kp.kernelParams = args;
    cudaGraphNode_t k; CHECK(cudaGraphAddKernelNode(&k, body, nullptr, 0, &kp));
    cudaGraphExec_t exec; CHECK(cudaGraphInstantiate(&exec, graph, 0));
    // Host loop: a one-kernel graph, its flag copied back after every step.
    cudaGraph_t step_graph; CHECK(cudaGraphCreate(&step_graph, 0));
    void* sargs[] = {&counter, &flag};
    kp.func = (void*)countdown_flag; kp.kernelParams = sargs;
    CHECK(cudaGraphAddKernelNode(&k, step_graph, nullptr, 0, &kp));
    cudaGraphExec_t step_exec; CHECK(cudaGraphInstantiate(&step_exec, step_graph, 0));
    std::vector<double> whiles, hosts;
    for (int r = 0; r < reps + 1; ++r) {
        CHECK(cudaMemcpy(counter, &steps, sizeof(int), cudaMemcpyHostToDevice));
        auto t = Clock::now();
        CHECK(cudaGraphLaunch(exec, stream)); CHECK(cudaStreamSynchronize(stream));
        double w = us_since(t);
        int left = -1; CHECK(cudaMemcpy(&left, counter, sizeof(int), cudaMemcpyDeviceToHost));
        if (left != 0) { std::fprintf(stderr, "WHILE left %d\n", left); return 1; }
        CHECK(cudaMemcpy(counter, &steps, sizeof(int), cudaMemcpyHostToDevice));
        t = Clock::now();
        int done_steps = 0;
        do {
            CHECK(cudaGraphLaunch(step_exec, stream));
            CHECK(cudaMemcpyAsync(&host_flag, flag, sizeof(int), cudaMemcpyDeviceToHost, stream));
            CHECK(cudaStreamSynchronize(stream));
            ++done_steps;
        } while (host_flag);
        double h = us_since(t);
        if (done_steps != steps) { std::fprintf(stderr, "host loop ran %d\n", done_steps); return 1; }
        if (r > 0) { whiles.push_back(w); hosts.push_back(h); }
    }
    std::printf("%f %f\n", median(whiles), median(hosts));
    return 0;
}

int main(int argc, char** argv) {
    if (argc == 5 && std::string(argv[1]) == "scaling") return scaling(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]));
    if (argc == 4 && std::string(argv[1]) == "loop") return loop(std::atoi(argv[2]), std::atoi(argv[3]));
    std::fprintf(stderr, "usage: perf scaling W L REPS | perf loop STEPS REPS\n");
    return 2;
}
