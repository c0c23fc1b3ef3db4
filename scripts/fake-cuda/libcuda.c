#include <stdint.h>
#include <string.h>
typedef int CUresult;
static void* current = 0;
static uintptr_t next_handle = 0x1000;
static uintptr_t next_addr = 0x700000000000;
static void* fresh(void) { next_handle += 16; return (void*)next_handle; }
CUresult cuInit(unsigned f) { return 0; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int* n) { *n = 1; return 0; }
CUresult cuDeviceGet(int* d, int o) { *d = 0; return 0; }
CUresult cuDeviceGetName(char* s, int len, int d) { strncpy(s, "Fake", len); return 0; }
CUresult cuDeviceGetAttribute(int* v, int attr, int d) {
  switch (attr) { case 75: *v = 9; break; case 76: *v = 0; break; default: *v = 1024; }
  return 0; }
CUresult cuDevicePrimaryCtxRetain(void** c, int d) { static void* ctx; if (!ctx) ctx = fresh(); *c = ctx; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { return 0; }
CUresult cuCtxSetCurrent(void* c) { current = c; return 0; }
CUresult cuCtxGetCurrent(void** c) { *c = current; return 0; }
CUresult cuCtxGetDevice(int* d) { *d = 0; return 0; }
CUresult cuStreamCreate(void** s, unsigned f) { *s = fresh(); return 0; }
CUresult cuStreamCreateWithPriority(void** s, unsigned f, int p) { *s = fresh(); return 0; }
CUresult cuEventCreate(void** e, unsigned f) { *e = fresh(); return 0; }
CUresult cuStreamIsCapturing(void* s, int* st) { *st = 0; return 0; }
CUresult cuThreadExchangeStreamCaptureMode(int* mode) { *mode = 0; return 0; }
CUresult cuMemAllocAsync(uint64_t* p, size_t n, void* s) { *p = next_addr; next_addr += (n + 4095) & ~4095ull; return 0; }
CUresult cuMemAlloc_v2(uint64_t* p, size_t n) { *p = next_addr; next_addr += (n + 4095) & ~4095ull; return 0; }
CUresult cuMemHostAlloc(void** p, size_t n, unsigned f) { static char buf[1<<20]; *p = buf; return 0; }
CUresult cuModuleLoadData(void** m, const void* img) { *m = fresh(); return 0; }
CUresult cuModuleGetFunction(void** f, void* m, const char* n) { *f = fresh(); return 0; }
CUresult cuGraphCreate(void** g, unsigned f) { *g = fresh(); return 0; }
CUresult cuGraphAddNode_v2(void** n, void* g, const void* d, const void* e, size_t k, void* p) { *n = fresh(); return 0; }
CUresult cuGraphAddNode(void** n, void* g, const void* d, size_t k, void* p) { *n = fresh(); return 0; }
CUresult cuGraphAddKernelNode_v2(void** n, void* g, const void* d, size_t k, const void* p) { *n = fresh(); return 0; }
CUresult cuGraphInstantiateWithFlags(void** e, void* g, unsigned long long f) { *e = fresh(); return 0; }
CUresult cuGraphInstantiateWithParams(void** e, void* g, void* p) { *e = fresh(); return 0; }
CUresult cuGraphConditionalHandleCreate(uint64_t* h, void* g, void* c, unsigned v, unsigned f) { *h = (uint64_t)fresh(); return 0; }
