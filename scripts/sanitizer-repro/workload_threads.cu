// graph-runtime's concurrency workload (graph-runtime/tests/load/
// workload.rs) in plain CUDA C++, for the one configuration that faults
// under racecheck with two threads: CUDA_GRAPH_LOAD_SKIP=device,switch,
// capture,update (README.md, "Test"). If this program faults under
// racecheck too, the tool does; if not, what graph-runtime adds (cudarc,
// the runtime's own calls) is where to look.
//
// THREADS threads, each with its own stream and buffers, run cycles for
// SECONDS seconds after one thread alone for SECONDS / 6 (at least 1 s), as
// tests/gpu_concurrency.rs does; thread 0 prints the host RSS every 1,000
// cycles (`workload_threads 1 30`: the soak's 10,000 cycles' worth, to
// compare tests/gpu_soak.rs's host figures with the driver alone). A cycle, as the workload's:
// - the main graph: a copy from pageable host memory into x; a graph
//   allocation `scratch` written by iota, x + scratch into scratch, copied
//   back into x, freed; x scaled by 2; copied into page-locked host memory;
//   a host node counting its calls; a memset of the WHILE counter to 3; an
//   IF (handle true by default) whose body marks visits[0]; a WHILE (true
//   by default) whose body counts down and marks visits[1]; a kernel that
//   marks visits[2] (the skipped SWITCH); an empty join; a child graph
//   adding one to w; an event record and wait; a user object. Instantiated,
//   launched, checked; its scale node set to 3 and launched again, checked;
//   visits and w read back and checked;
// - a second graph (memset y = 1, scale by 4, empty), launched, then
//   updated whole from a rebuilt one (scale by 5) after a synchronize,
//   launched, checked;
// - the device-launch part skipped: t set by a copy from the host.
// Each launch is bracketed, per bound buffer, by a wait for the buffer's
// event and a record of it (what cudarc's tracking does). Kernels are
// compiled by NVRTC for compute_90 and loaded once, shared by the threads,
// added with cuGraphAddKernelNode (as graph-runtime does).
//
// What graph-runtime does around the graph is mirrored too, each part with
// a switch (a comma-separated third argument) that turns it back into the
// plain way, to bisect with:
// - the graph-owned host buffer is page-locked memory made each cycle and
//   freed, when the graph's user object is released, on a "reaper" thread
//   (`pinned-once`: one buffer per worker);
// - the host node's callback hands the call to one thread shared by all
//   workers and waits for it (`inline-host`: the callback counts itself);
// - the buffers come from cudaMallocAsync on the worker's stream and go
//   with cudaFreeAsync, the stream destroyed without a synchronize, as
//   cudarc's do (`sync-alloc`: cudaMalloc and cudaFree).
// `no-cond` leaves the IF and WHILE nodes out, as run.sh's racecheck run
// of tests/gpu_concurrency.rs does (CUDA_GRAPH_LOAD_SKIP=device,cond): the
// configuration in which racecheck once reported "failure to track a
// kernel launch" and a hazard (tests/README.md). `2 3 no-cond` under
// racecheck, six runs at once on the H200 (2026-12-04): one run reported
// "Internal Sanitizer Error: Detected a failure to track a kernel launch"
// and 1 hazard, five were clean, all six checked every result: the
// tool's, as for the test.
//
// Measured on the lent H200 (CUDA 13), 2026-12-02: `2 3` passes without a
// sanitizer (994 and 1041 cycles, every result checked) and under memcheck
// (0 errors); under racecheck it fails as graph-runtime's test does
// (cudaStreamSynchronize: an illegal memory access, 0 hazards), also with
// all three switches: the fault is racecheck's. `1 30` (13,183 cycles):
// host RSS 163.2 MiB at cycle 1,000, 165.1 MiB at cycle 10,000.
//
// On an H100, 2026-12-06: `2 3` under memcheck was clean alone (2 of 2)
// and failed four at once (3 of 4, and 2 of 2 beside two runs of the
// Rust test): "an illegal memory access was encountered" at
// cudaStreamSynchronize or the reaper's cudaFreeHost, no invalid access
// reported. The Rust test fails the same way, and only beside others.
//
//   nvcc -O2 -arch=sm_90 -o workload_threads workload_threads.cu -lnvrtc -lcuda
//   compute-sanitizer --tool racecheck ./workload_threads THREADS SECONDS [SWITCHES]
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvrtc.h>
#include "nvrtc_module.h"
#define CU(x) do { CUresult e = (x); if (e != CUDA_SUCCESS) { const char* m; cuGetErrorString(e, &m); printf("thread %d: %s:%d %s: %s\n", id, __FILE__, __LINE__, #x, m); exit(1);} } while (0)
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("thread %d: %s:%d %s: %s\n", id, __FILE__, __LINE__, #x, cudaGetErrorString(e)); exit(1);} } while (0)

const unsigned N = 1024;

// kernels/cuda/elementwise.cu and conditional.cu's kernels, as the
// workload uses them.
static const char* SOURCE = R"(
extern "C" __device__ void cudaGraphSetConditional(unsigned long long handle, unsigned int value);
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
extern "C" __global__ void countdown_step(unsigned long long handle, int* counter) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *counter -= 1;
        cudaGraphSetConditional(handle, *counter > 0 ? 1u : 0u);
    }
}
extern "C" __global__ void mark(int* visits, unsigned slot) {
    if (blockIdx.x == 0 && threadIdx.x == 0) visits[slot] += 1;
}
)";

enum Kernel { ADD, SCALE, ADD_ONE, IOTA, STEP, MARK, KERNELS };
static const char* NAMES[] = {"add", "scale", "add_one", "iota", "countdown_step", "mark"};
static CUfunction fn[KERNELS];

static void load() {
    int id = -1;
    CUmodule m = nvrtc_module(SOURCE, "workload_threads.cu");
    for (int k = 0; k < KERNELS; k++) CU(cuModuleGetFunction(&fn[k], m, NAMES[k]));
}

static CUDA_KERNEL_NODE_PARAMS params(Kernel k, void** args, unsigned grid, unsigned block) {
    CUDA_KERNEL_NODE_PARAMS kp = {};
    kp.func = fn[k]; kp.gridDimX = grid; kp.gridDimY = 1; kp.gridDimZ = 1;
    kp.blockDimX = block; kp.blockDimY = 1; kp.blockDimZ = 1; kp.kernelParams = args;
    return kp;
}

static cudaGraphNode_t kernel(int id, cudaGraph_t g, std::vector<cudaGraphNode_t> deps, Kernel k, void** args,
                              unsigned grid, unsigned block) {
    CUDA_KERNEL_NODE_PARAMS kp = params(k, args, grid, block);
    cudaGraphNode_t node;
    CU(cuGraphAddKernelNode(&node, g, deps.data(), deps.size(), &kp));
    return node;
}

static cudaGraph_t conditional(int id, cudaGraph_t g, std::vector<cudaGraphNode_t> deps, cudaGraphConditionalHandle h,
                               cudaGraphConditionalNodeType type, cudaGraphNode_t* out) {
    cudaGraphNodeParams cp = {}; cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = h; cp.conditional.type = type; cp.conditional.size = 1;
    CK(cudaGraphAddNode(out, g, deps.data(), nullptr, deps.size(), &cp));
    return cp.conditional.phGraph_out[0];
}

static bool pinned_once = false, inline_host = false, sync_alloc = false, no_cond = false;

// A thread that runs queued work in order (the runtime's reaper and its
// host-node thread).
struct Queue {
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::function<void()>> work;
    Queue() {
        std::thread([this] {
            int id = -2;
            CK(cudaSetDevice(0));
            for (;;) {
                std::function<void()> f;
                {
                    std::unique_lock<std::mutex> lock(m);
                    cv.wait(lock, [this] { return !work.empty(); });
                    f = std::move(work.front());
                    work.pop_front();
                }
                f();
            }
        }).detach();
    }
    void push(std::function<void()> f) {
        { std::lock_guard<std::mutex> lock(m); work.push_back(std::move(f)); }
        cv.notify_one();
    }
};
static Queue* reaper;
static Queue* host_thread;

// The page-locked buffer's user object: freed on the reaper thread.
static void release_pinned(void* p) {
    reaper->push([p] { int id = -2; CK(cudaFreeHost(p)); });
}

static void count_call(void* calls) { static_cast<std::atomic<long>*>(calls)->fetch_add(1); }

// graph-runtime's host-node callback: hands the call to the host-node
// thread and waits for it.
static void call_host(void* calls) {
    std::promise<void> done;
    std::future<void> answer = done.get_future();
    host_thread->push([calls, &done] { count_call(calls); done.set_value(); });
    answer.wait();
}
static void release_kept(void* kept) { static_cast<std::atomic<long>*>(kept)->fetch_sub(1); }

struct Data {
    std::vector<float> x_h;
    float *x, *y, *w, *t, *out = nullptr;
    int *visits, *counter;
    unsigned char* z;
    cudaEvent_t ev;
    cudaEvent_t track[5];  // x, w, visits, counter, y: cudarc's per-buffer events
    std::atomic<long> host_calls{0};
};

// What the user objects keep (released by the driver, maybe after a
// thread's buffers are gone: global).
static std::atomic<long> kept_count{0};

// cudarc's tracking around a launch: wait for each buffer's last use,
// launch, record the use.
static void launch_tracked(int id, cudaGraphExec_t exec, cudaStream_t s, Data& d, std::vector<int> buffers) {
    for (int b : buffers) CK(cudaStreamWaitEvent(s, d.track[b], 0));
    CK(cudaGraphLaunch(exec, s));
    for (int b : buffers) CK(cudaEventRecord(d.track[b], s));
}

template <typename T>
static std::vector<T> read(int id, cudaStream_t s, const T* p, size_t n) {
    std::vector<T> h(n);
    CK(cudaMemcpyAsync(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost, s));
    CK(cudaStreamSynchronize(s));
    return h;
}

static void fail(int id, long cycle, const char* what) {
    printf("thread %d, cycle %ld: %s: wrong\n", id, cycle, what);
    exit(1);
}

static void cycle(int id, cudaStream_t s, Data& d, long c) {
    unsigned n = N, grid = (N + 255) / 256;
    long calls_before = d.host_calls.load();
    // The skipped capture: its memset of z, made on the stream (before the
    // main graph is instantiated, as the workload makes it).
    CK(cudaMemsetAsync(d.z, 7, N, s));
    {
        cudaGraph_t g; CK(cudaGraphCreate(&g, 0));
        float* out = d.out;
        if (!pinned_once) {
            CK(cudaMallocHost(&out, N * sizeof(float)));
            memset(out, 0, N * sizeof(float));
            cudaUserObject_t owner;
            CK(cudaUserObjectCreate(&owner, out, release_pinned, 1, cudaUserObjectNoDestructorSync));
            CK(cudaGraphRetainUserObject(g, owner, 1, cudaGraphUserObjectMove));
        }
        cudaGraphNode_t up, alloc, back, freed, down, host, reset, when, repeat, join, sub, record, wait;
        CK(cudaGraphAddMemcpyNode1D(&up, g, nullptr, 0, d.x, d.x_h.data(), N * sizeof(float), cudaMemcpyHostToDevice));
        cudaMemAllocNodeParams ap = {};
        ap.poolProps.allocType = cudaMemAllocationTypePinned;
        ap.poolProps.location.type = cudaMemLocationTypeDevice;
        ap.poolProps.location.id = 0;
        ap.bytesize = N * sizeof(float);
        CK(cudaGraphAddMemAllocNode(&alloc, g, nullptr, 0, &ap));
        float* scratch = static_cast<float*>(ap.dptr);
        void* iota_args[] = {&scratch, &n};
        cudaGraphNode_t iota = kernel(id, g, {alloc}, IOTA, iota_args, grid, 256);
        void* sum_args[] = {&d.x, &scratch, &scratch, &n};
        cudaGraphNode_t sum = kernel(id, g, {up, iota}, ADD, sum_args, grid, 256);
        CK(cudaGraphAddMemcpyNode1D(&back, g, &sum, 1, d.x, scratch, N * sizeof(float), cudaMemcpyDeviceToDevice));
        CK(cudaGraphAddMemFreeNode(&freed, g, &back, 1, scratch));
        float two = 2.0f;
        void* scale_args[] = {&d.x, &two, &n};
        cudaGraphNode_t scale = kernel(id, g, {back}, SCALE, scale_args, grid, 256);
        CK(cudaGraphAddMemcpyNode1D(&down, g, &scale, 1, out, d.x, N * sizeof(float), cudaMemcpyDeviceToHost));
        cudaHostNodeParams hp = {}; hp.fn = inline_host ? count_call : call_host; hp.userData = &d.host_calls;
        CK(cudaGraphAddHostNode(&host, g, &down, 1, &hp));
        cudaMemsetParams mp = {}; mp.dst = d.counter; mp.value = 3; mp.elementSize = 4; mp.width = 1; mp.height = 1;
        CK(cudaGraphAddMemsetNode(&reset, g, nullptr, 0, &mp));
        unsigned if_slot = 0, while_slot = 1, switch_slot = 2;
        cudaGraphConditionalHandle if_cond, while_cond;
        repeat = reset;  // `no-cond`: the marking kernel follows the memset
        if (!no_cond) {
            CK(cudaGraphConditionalHandleCreate(&if_cond, g, 1, cudaGraphCondAssignDefault));
            cudaGraph_t then = conditional(id, g, {}, if_cond, cudaGraphCondTypeIf, &when);
            void* mark_if[] = {&d.visits, &if_slot};
            kernel(id, then, {}, MARK, mark_if, 1, 1);
            CK(cudaGraphConditionalHandleCreate(&while_cond, g, 1, cudaGraphCondAssignDefault));
            cudaGraph_t body = conditional(id, g, {when, reset}, while_cond, cudaGraphCondTypeWhile, &repeat);
            void* step_args[] = {&while_cond, &d.counter};
            cudaGraphNode_t step = kernel(id, body, {}, STEP, step_args, 1, 1);
            void* mark_while[] = {&d.visits, &while_slot};
            kernel(id, body, {step}, MARK, mark_while, 1, 1);
        }
        void* mark_switch[] = {&d.visits, &switch_slot};
        cudaGraphNode_t choose = kernel(id, g, {repeat}, MARK, mark_switch, 1, 1);
        cudaGraphNode_t join_deps[] = {host, choose};
        CK(cudaGraphAddEmptyNode(&join, g, join_deps, 2));
        cudaGraph_t child; CK(cudaGraphCreate(&child, 0));
        void* bump_args[] = {&d.w, &n};
        kernel(id, child, {}, ADD_ONE, bump_args, grid, 256);
        CK(cudaGraphAddChildGraphNode(&sub, g, &join, 1, child));
        CK(cudaGraphDestroy(child));  // the node holds a clone
        CK(cudaGraphAddEventRecordNode(&record, g, &sub, 1, d.ev));
        CK(cudaGraphAddEventWaitNode(&wait, g, &record, 1, d.ev));
        kept_count.fetch_add(1);
        cudaUserObject_t kept;
        CK(cudaUserObjectCreate(&kept, &kept_count, release_kept, 1, cudaUserObjectNoDestructorSync));
        CK(cudaGraphRetainUserObject(g, kept, 1, cudaGraphUserObjectMove));
        cudaGraphExec_t exec; CK(cudaGraphInstantiate(&exec, g, 0));
        float factors[] = {2.0f, 3.0f};
        for (int launch = 0; launch < 2; launch++) {
            if (launch == 1) {
                void* args[] = {&d.x, &factors[1], &n};
                CUDA_KERNEL_NODE_PARAMS kp = params(SCALE, args, grid, 256);
                CU(cuGraphExecKernelNodeSetParams(exec, scale, &kp));
            }
            launch_tracked(id, exec, s, d, {0, 1, 2, 3});
            CK(cudaStreamSynchronize(s));
            for (unsigned i = 0; i < N; i++)
                if (out[i] != 2.0f * factors[launch] * i) fail(id, c, "x = 2 i * factor");
        }
        std::vector<int> visits = read(id, s, d.visits, 3);
        int conds = no_cond ? 0 : 1;
        if (visits[0] != 2 * conds || visits[1] != 6 * conds || visits[2] != 2) fail(id, c, "visits (if, while, switch)");
        for (float v : read(id, s, d.w, N)) if (v != 2.0f) fail(id, c, "child graph");
        CK(cudaGraphExecDestroy(exec));
        CK(cudaGraphDestroy(g));
    }
    if (d.host_calls.load() - calls_before != 2) fail(id, c, "host node calls");
    for (unsigned char v : read(id, s, d.z, N)) if (v != 7) fail(id, c, "captured memset");

    // Whole-graph update from a rebuilt graph (no memory nodes), after a
    // synchronize (the skipped `update` part).
    {
        auto build = [&](float factor, cudaGraphNode_t* scale_node) {
            cudaGraph_t g; CK(cudaGraphCreate(&g, 0));
            cudaGraphNode_t fill, done;
            float one = 1.0f; unsigned bits; memcpy(&bits, &one, 4);
            cudaMemsetParams mp = {}; mp.dst = d.y; mp.value = bits; mp.elementSize = 4; mp.width = N; mp.height = 1;
            CK(cudaGraphAddMemsetNode(&fill, g, nullptr, 0, &mp));
            void* args[] = {&d.y, &factor, &n};
            *scale_node = kernel(id, g, {fill}, SCALE, args, grid, 256);
            CK(cudaGraphAddEmptyNode(&done, g, scale_node, 1));
            return g;
        };
        cudaGraphNode_t first_scale, second_scale;
        cudaGraph_t g = build(4.0f, &first_scale);
        cudaGraphExec_t exec; CK(cudaGraphInstantiate(&exec, g, 0));
        launch_tracked(id, exec, s, d, {4});
        cudaGraph_t rebuilt = build(5.0f, &second_scale);
        CK(cudaStreamSynchronize(s));
        cudaGraphExecUpdateResultInfo info;
        CK(cudaGraphExecUpdate(exec, rebuilt, &info));
        launch_tracked(id, exec, s, d, {4});
        for (float v : read(id, s, d.y, N)) if (v != 5.0f) fail(id, c, "updated scale");
        // Dropped in the workload's order: the rebuilt graph, the exec, the graph.
        CK(cudaGraphDestroy(rebuilt));
        CK(cudaGraphExecDestroy(exec));
        CK(cudaGraphDestroy(g));
    }

    // The skipped device launch: t set from the host.
    std::vector<float> ones(N, 1.0f);
    CK(cudaMemcpyAsync(d.t, ones.data(), N * sizeof(float), cudaMemcpyHostToDevice, s));
    for (float v : read(id, s, d.t, N)) if (v != 1.0f) fail(id, c, "device launch");
    CK(cudaMemsetAsync(d.visits, 0, 3 * sizeof(int), s));
    CK(cudaMemsetAsync(d.w, 0, N * sizeof(float), s));
    CK(cudaMemsetAsync(d.t, 0, N * sizeof(float), s));
    CK(cudaMemsetAsync(d.z, 0, N, s));
}

// Host RSS in MiB (/proc/self/statm), to compare the soak's host memory
// figures with what the driver alone does.
static double rss_mib() {
    long pages = 0, resident = 0;
    FILE* f = fopen("/proc/self/statm", "r");
    if (f) { if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0; fclose(f); }
    return resident * (double)sysconf(_SC_PAGESIZE) / (1 << 20);
}

static void worker(int id, double seconds, std::atomic<long>* cycles, bool report) {
    CK(cudaSetDevice(0));
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    Data d;
    for (unsigned i = 0; i < N; i++) d.x_h.push_back((float)i);
    // Device buffers: zeroed, from the stream's pool as cudarc's
    // alloc_zeros makes them, or plainly.
    auto alloc = [&](void** p, size_t bytes) {
        if (sync_alloc) { CK(cudaMalloc(p, bytes)); CK(cudaMemset(*p, 0, bytes)); }
        else { CK(cudaMallocAsync(p, bytes, s)); CK(cudaMemsetAsync(*p, 0, bytes, s)); }
    };
    for (float** p : {&d.x, &d.y, &d.w, &d.t}) alloc(reinterpret_cast<void**>(p), N * sizeof(float));
    alloc(reinterpret_cast<void**>(&d.visits), 3 * sizeof(int));
    alloc(reinterpret_cast<void**>(&d.counter), sizeof(int));
    alloc(reinterpret_cast<void**>(&d.z), N);
    if (pinned_once) CK(cudaMallocHost(&d.out, N * sizeof(float)));
    CK(cudaEventCreate(&d.ev));
    for (cudaEvent_t& ev : d.track) CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
        cycle(id, s, d, cycles->load());
        ++*cycles;
        if (report && *cycles % 1000 == 0)
            printf("thread 0: cycle %6ld: host RSS %.1f MiB\n", cycles->load(), rss_mib());
    }
    // cudarc frees on the stream and destroys it without a synchronize.
    for (void* p : {(void*)d.x, (void*)d.y, (void*)d.w, (void*)d.t, (void*)d.visits, (void*)d.counter, (void*)d.z}) {
        if (sync_alloc) CK(cudaFree(p)); else CK(cudaFreeAsync(p, s));
    }
    if (pinned_once) { CK(cudaStreamSynchronize(s)); CK(cudaFreeHost(d.out)); }
    CK(cudaEventDestroy(d.ev));
    for (cudaEvent_t ev : d.track) CK(cudaEventDestroy(ev));
    CK(cudaStreamDestroy(s));
}

int main(int argc, char** argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    double seconds = argc > 2 ? atof(argv[2]) : 3.0;
    std::string switches = argc > 3 ? argv[3] : "";
    pinned_once = switches.find("pinned-once") != std::string::npos;
    inline_host = switches.find("inline-host") != std::string::npos;
    sync_alloc = switches.find("sync-alloc") != std::string::npos;
    no_cond = switches.find("no-cond") != std::string::npos;
    int id = -1;
    CK(cudaFree(0));
    load();
    reaper = new Queue();
    host_thread = new Queue();
    cudaStream_t kept; CK(cudaStreamCreateWithFlags(&kept, cudaStreamNonBlocking));  // the test keeps one stream
    std::atomic<long> solo{0};
    double solo_seconds = seconds / 6 > 1 ? seconds / 6 : 1;
    worker(0, solo_seconds, &solo, false);
    printf("one thread alone: %ld cycles in %.0f s\n", solo.load(), solo_seconds);
    std::vector<std::atomic<long>> cycles(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) pool.emplace_back(worker, t, seconds, &cycles[t], t == 0);
    for (auto& t : pool) t.join();
    printf("%d threads, %.0f s%s%s: cycles", threads, seconds, switches.empty() ? "" : ", ", switches.c_str());
    for (auto& c : cycles) printf(" %ld", c.load());
    printf("; every result checked: ok\n");
    CK(cudaStreamDestroy(kept));
    return 0;
}
