// What the repro programs here share: CUDA C compiled by NVRTC to PTX for
// compute_90, without -rdc, and loaded with cuModuleLoadData, as
// graph-runtime loads its kernels (CUDA-NOTES.md, "Device-side calls from
// NVRTC kernels"). Any failure prints the step and exits.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda.h>
#include <nvrtc.h>

static void nvrtc_check(nvrtcResult e, const char* what) {
    if (e != NVRTC_SUCCESS) { printf("%s: %s\n", what, nvrtcGetErrorString(e)); exit(1); }
}

// The module compiled from `source` (`name` is the file name in NVRTC's
// messages); the context must be current.
static CUmodule nvrtc_module(const char* source, const char* name) {
    nvrtcProgram p;
    nvrtc_check(nvrtcCreateProgram(&p, source, name, 0, nullptr, nullptr), "nvrtcCreateProgram");
    const char* opts[] = {"--gpu-architecture=compute_90"};
    if (nvrtcCompileProgram(p, 1, opts) != NVRTC_SUCCESS) {
        size_t n; nvrtcGetProgramLogSize(p, &n); std::vector<char> log(n); nvrtcGetProgramLog(p, log.data());
        printf("nvrtc: %s\n", log.data()); exit(1);
    }
    size_t n; nvrtc_check(nvrtcGetPTXSize(p, &n), "nvrtcGetPTXSize");
    std::vector<char> ptx(n); nvrtc_check(nvrtcGetPTX(p, ptx.data()), "nvrtcGetPTX");
    nvrtc_check(nvrtcDestroyProgram(&p), "nvrtcDestroyProgram");
    CUmodule m;
    CUresult e = cuModuleLoadData(&m, ptx.data());
    if (e != CUDA_SUCCESS) { const char* s; cuGetErrorString(e, &s); printf("cuModuleLoadData: %s\n", s); exit(1); }
    return m;
}
