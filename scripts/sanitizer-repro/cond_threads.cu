// Does compute-sanitizer's racecheck fault graphs with conditional nodes
// launched from several host threads at once? In plain CUDA C++ (no Rust,
// no graph-runtime): THREADS threads, each with its own stream and buffers,
// for SECONDS seconds build a graph (a kernel, then a WHILE node whose body
// adds one to the buffer and counts down three times, then an IF node whose
// body adds ten), instantiate it, launch it, synchronize, check the buffer
// and destroy everything: the shape of graph-runtime's concurrency test
// (tests/gpu_concurrency.rs) with only the conditional part.
//
// With a third argument `nvrtc`, the kernels are compiled by NVRTC for
// compute_90 from source that declares cudaGraphSetConditional itself,
// loaded once with cuModuleLoadData and shared by the threads, and added
// with cuGraphAddKernelNode: as graph-runtime does (kernels/cuda/
// conditional.cu, CUDA-NOTES.md). Without it, nvcc's kernels and
// cudaGraphAddKernelNode.
//
//   nvcc -O2 -arch=sm_90 -o cond_threads cond_threads.cu -lnvrtc -lcuda
//   compute-sanitizer --tool racecheck ./cond_threads THREADS SECONDS [nvrtc|nvcc [switch,default,twice,alloc]]
//
// A fourth argument names variants, comma-separated, each nearer the
// workload of graph-runtime's concurrency test: `switch` (a SWITCH of three
// arms follows the IF, its handle set by a kernel of the parent graph; arm 1
// adds a hundred), `default` (the IF's handle is true by default, with no
// kernel setting it), `twice` (each exec is launched twice per cycle),
// `alloc` (a graph-memory allocation, written by a kernel and freed by the
// graph, then a host node, beside the conditionals), `capture` (the WHILE
// body's count-down kernel added by a stream capture into the body graph,
// cudaStreamBeginCaptureToGraph, as graph-runtime's capture nodes are),
// `own` (everything in a non-primary context made beside the primary one),
// `child` (the count-down captured into a graph of its own, added to the
// body as a child graph node: graph-runtime's shape).
//
// Measured on the lent H200 (2026-12-02, compute-sanitizer of CUDA 13):
// clean under racecheck with 1, 2 and 4 threads, nvcc and NVRTC kernels,
// and every variant (switch; default; twice; alloc,twice;
// alloc,switch,default,twice), while graph-runtime's concurrency workload
// with those parts faults under racecheck with two threads (README.md,
// "Test"). Whatever the workload adds beyond this program is what to look at.
// On an H100 (2026-12-06), six at once under memcheck, one thread, 3-4 s
// each: clean with no variant (NVRTC and nvcc kernels, 12 runs), with
// `capture` (12) and with `capture,own` (NVRTC, 6), where graph-runtime's
// test of a capture in a WHILE body failed six at once in 1 run of 6
// (tests/README.md). With `child`, clean in 12 of 12 (H100, 2026-12-06);
// with `switch`, six at once under memcheck on an H200 the same day, 14
// runs of 18 failed (`cudaMemcpyAsync`: an illegal memory access), as
// switch_once.cu and graph-runtime's conditional tests do: the tool's.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvrtc.h>
#include "nvrtc_module.h"
#define CU(x) do { CUresult e = (x); if (e != CUDA_SUCCESS) { const char* m; cuGetErrorString(e, &m); printf("thread %d: %s:%d %s: %s\n", id, __FILE__, __LINE__, #x, m); exit(1);} } while (0)
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

// The same kernels for NVRTC (the handle as a 64-bit integer).
static const char* NVRTC_SOURCE = R"(
extern "C" __device__ void cudaGraphSetConditional(unsigned long long handle, unsigned int value);
extern "C" __global__ void fill(float* x, float v, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}
extern "C" __global__ void add(float* x, float v, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += v;
}
extern "C" __global__ void count_down(unsigned long long h, unsigned* left) {
    if (threadIdx.x == 0 && blockIdx.x == 0) { unsigned l = --*left; cudaGraphSetConditional(h, l > 0 ? 1u : 0u); }
}
extern "C" __global__ void set_if(unsigned long long h) {
    if (threadIdx.x == 0 && blockIdx.x == 0) cudaGraphSetConditional(h, 1u);
}
)";

enum Kernel { FILL, ADD, COUNT_DOWN, SET_IF };
static const char* NAMES[] = {"fill", "add", "count_down", "set_if"};
static bool use_nvrtc = false;
static bool use_switch = false;
static bool if_default = false;
static int launches = 1;
static bool with_alloc = false;
static bool by_capture = false;
static bool by_child = false;
static CUcontext own_ctx = nullptr;
static CUfunction nvrtc_fn[4];

static void load_nvrtc() {
    int id = -1;
    CUmodule m = nvrtc_module(NVRTC_SOURCE, "cond_threads.cu");
    for (int k = 0; k < 4; k++) CU(cuModuleGetFunction(&nvrtc_fn[k], m, NAMES[k]));
}

static cudaGraphNode_t kernel(int id, cudaGraph_t g, const cudaGraphNode_t* dep, Kernel k, void** args, unsigned grid, unsigned block) {
    static void* const STUBS[] = {(void*)fill, (void*)add, (void*)count_down, (void*)set_if};
    cudaGraphNode_t node;
    if (use_nvrtc) {
        CUDA_KERNEL_NODE_PARAMS kp = {};
        kp.func = nvrtc_fn[k]; kp.gridDimX = grid; kp.gridDimY = 1; kp.gridDimZ = 1;
        kp.blockDimX = block; kp.blockDimY = 1; kp.blockDimZ = 1; kp.kernelParams = args;
        CU(cuGraphAddKernelNode(&node, g, dep, dep ? 1 : 0, &kp));
    } else {
        cudaKernelNodeParams kp = {};
        kp.func = STUBS[k]; kp.gridDim = dim3(grid); kp.blockDim = dim3(block); kp.kernelParams = args;
        CK(cudaGraphAddKernelNode(&node, g, dep, dep ? 1 : 0, &kp));
    }
    return node;
}

static cudaGraph_t conditional(int id, cudaGraph_t g, const cudaGraphNode_t* dep, cudaGraphConditionalHandle h,
                               cudaGraphConditionalNodeType type, cudaGraphNode_t* out, unsigned size = 1,
                               unsigned arm = 0, size_t ndep = 1) {
    cudaGraphNodeParams cp = {}; cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = h; cp.conditional.type = type; cp.conditional.size = size;
    CK(cudaGraphAddNode(out, g, dep, nullptr, dep ? ndep : 0, &cp));
    return cp.conditional.phGraph_out[arm];
}

static void worker(int id, double seconds, std::atomic<long>* cycles) {
    if (own_ctx) CU(cuCtxSetCurrent(own_ctx)); else CK(cudaSetDevice(0));
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaStream_t cs; CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    float* x; unsigned* left; CK(cudaMalloc(&x, N * sizeof(float))); CK(cudaMalloc(&left, sizeof(unsigned)));
    unsigned n = N;
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        unsigned three = 3;
        CK(cudaMemcpyAsync(left, &three, sizeof three, cudaMemcpyHostToDevice, s));
        cudaGraph_t g; CK(cudaGraphCreate(&g, 0));
        float zero = 0.0f, one = 1.0f, ten = 10.0f;
        void* fill_args[] = {&x, &zero, &n};
        cudaGraphNode_t first = kernel(id, g, nullptr, FILL, fill_args, (N + 255) / 256, 256);
        if (with_alloc) {
            // graph-runtime's workload: scratch graph memory, written by a
            // kernel and freed by the graph; and a host node.
            cudaMemAllocNodeParams ap = {};
            ap.poolProps.allocType = cudaMemAllocationTypePinned;
            ap.poolProps.location.type = cudaMemLocationTypeDevice;
            ap.poolProps.location.id = 0;
            ap.bytesize = N * sizeof(float);
            cudaGraphNode_t alloc; CK(cudaGraphAddMemAllocNode(&alloc, g, nullptr, 0, &ap));
            float* scratch = (float*)ap.dptr;
            void* scratch_args[] = {&scratch, &one, &n};
            cudaGraphNode_t use = kernel(id, g, &alloc, FILL, scratch_args, (N + 255) / 256, 256);
            cudaGraphNode_t freed; CK(cudaGraphAddMemFreeNode(&freed, g, &use, 1, (void*)scratch));
            cudaHostNodeParams hp = {}; hp.fn = [](void*) {}; hp.userData = nullptr;
            cudaGraphNode_t host; CK(cudaGraphAddHostNode(&host, g, &freed, 1, &hp));
        }
        cudaGraphConditionalHandle wh; CK(cudaGraphConditionalHandleCreate(&wh, g, 1, cudaGraphCondAssignDefault));
        cudaGraphNode_t loop; cudaGraph_t body = conditional(id, g, &first, wh, cudaGraphCondTypeWhile, &loop);
        void* add_args[] = {&x, &one, &n};
        cudaGraphNode_t step = kernel(id, body, nullptr, ADD, add_args, (N + 255) / 256, 256);
        void* cd_args[] = {&wh, &left};
        if (by_capture || by_child) {
            // `capture`: the count-down captured into the body itself, after
            // the add. `child`: as graph-runtime's add_capture_setting does
            // (tests/gpu_runtime/nodes.rs, a_capture_in_a_body_holds_only_
            // what_bodies_allow), captured in relaxed mode into a graph of
            // its own, which the body gets as a child graph node.
            cudaGraph_t into = body;
            if (by_child) CK(cudaGraphCreate(&into, 0));
            CK(cudaStreamBeginCaptureToGraph(cs, into, by_child ? nullptr : &step, nullptr, by_child ? 0 : 1,
                                             by_child ? cudaStreamCaptureModeRelaxed : cudaStreamCaptureModeThreadLocal));
            if (use_nvrtc) CU(cuLaunchKernel(nvrtc_fn[COUNT_DOWN], 1, 1, 1, 1, 1, 1, 0, cs, cd_args, nullptr));
            else count_down<<<1, 1, 0, cs>>>(wh, left);
            cudaGraph_t same; CK(cudaStreamEndCapture(cs, &same));
            if (by_child) {
                cudaGraphNode_t child; CK(cudaGraphAddChildGraphNode(&child, body, &step, 1, into));
                CK(cudaGraphDestroy(into));
            }
        } else {
            kernel(id, body, &step, COUNT_DOWN, cd_args, 1, 1);
        }
        cudaGraphConditionalHandle ih;
        cudaGraphNode_t set = loop;
        if (if_default) {
            // graph-runtime's workload: the IF's handle true by default.
            CK(cudaGraphConditionalHandleCreate(&ih, g, 1, cudaGraphCondAssignDefault));
        } else {
            CK(cudaGraphConditionalHandleCreate(&ih, g, 0, 0));
            void* if_args[] = {&ih};
            set = kernel(id, g, &loop, SET_IF, if_args, 1, 1);
        }
        cudaGraphNode_t when; cudaGraph_t then = conditional(id, g, &set, ih, cudaGraphCondTypeIf, &when);
        void* add10_args[] = {&x, &ten, &n};
        float hundred = 100.0f;
        void* add100_args[] = {&x, &hundred, &n};
        kernel(id, then, nullptr, ADD, add10_args, (N + 255) / 256, 256);
        if (use_switch) {
            // graph-runtime's workload: the handle set by a kernel in the
            // parent graph, a SWITCH of three arms after it and the IF.
            cudaGraphConditionalHandle sh; CK(cudaGraphConditionalHandleCreate(&sh, g, 0, 0));
            void* pick_args[] = {&sh};
            cudaGraphNode_t deps[2] = {when, kernel(id, g, nullptr, SET_IF, pick_args, 1, 1)};
            cudaGraphNode_t choose;
            cudaGraph_t arm = conditional(id, g, deps, sh, cudaGraphCondTypeSwitch, &choose, 3, 1, 2);
            kernel(id, arm, nullptr, ADD, add100_args, (N + 255) / 256, 256);
        }
        cudaGraphExec_t exec; CK(cudaGraphInstantiate(&exec, g, 0));
        for (int l = 0; l < launches; l++) {
            // Each launch starts from the same state (fill resets x).
            CK(cudaMemcpyAsync(left, &three, sizeof three, cudaMemcpyHostToDevice, s));
            CK(cudaGraphLaunch(exec, s));
        }
        std::vector<float> host(N);
        float want = use_switch ? 113.0f : 13.0f;
        CK(cudaMemcpyAsync(host.data(), x, N * sizeof(float), cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        for (unsigned i = 0; i < N; i++)
            if (host[i] != want) { printf("thread %d: x[%u] = %f, want %f\n", id, i, host[i], want); exit(1); }
        CK(cudaGraphExecDestroy(exec)); CK(cudaGraphDestroy(g));
        ++*cycles;
    }
    CK(cudaFree(x)); CK(cudaFree(left)); CK(cudaStreamDestroy(s)); CK(cudaStreamDestroy(cs));
}

int main(int argc, char** argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    double seconds = argc > 2 ? atof(argv[2]) : 8.0;
    use_nvrtc = argc > 3 && std::string(argv[3]) == "nvrtc";
    use_switch = argc > 4 && std::string(argv[4]).find("switch") != std::string::npos;
    if_default = argc > 4 && std::string(argv[4]).find("default") != std::string::npos;
    with_alloc = argc > 4 && std::string(argv[4]).find("alloc") != std::string::npos;
    by_child = argc > 4 && std::string(argv[4]).find("child") != std::string::npos;
    by_capture = argc > 4 && std::string(argv[4]).find("capture") != std::string::npos;
    launches = argc > 4 && std::string(argv[4]).find("twice") != std::string::npos ? 2 : 1;
    int id = -1;
    CK(cudaFree(0));
    if (argc > 4 && std::string(argv[4]).find("own") != std::string::npos) {
        // graph-runtime's tests' own_context(): a non-primary context beside
        // the primary one, current on every worker.
        CU(cuCtxCreate(&own_ctx, nullptr, 0, 0));
        CU(cuCtxSetCurrent(own_ctx));
    }
    if (use_nvrtc) load_nvrtc();
    std::vector<std::atomic<long>> cycles(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) pool.emplace_back(worker, t, seconds, &cycles[t]);
    for (auto& t : pool) t.join();
    printf("%s kernels, %d threads, %.0f s: cycles", use_nvrtc ? "NVRTC" : "nvcc", threads, seconds);
    for (auto& c : cycles) printf(" %ld", c.load());
    printf("; every result %g: ok\n", use_switch ? 113.0 : 13.0);
    return 0;
}
