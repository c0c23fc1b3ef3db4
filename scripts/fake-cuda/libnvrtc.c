#include <string.h>
#include <stddef.h>
int nvrtcCreateProgram(void** p, const char* s, const char* n, int k, const char* const* h, const char* const* i) { static int x; *p = &x; return 0; }
int nvrtcGetPTXSize(void* p, size_t* n) { *n = 2; return 0; }
int nvrtcGetPTX(void* p, char* out) { out[0] = ' '; out[1] = 0; return 0; }
int nvrtcGetProgramLogSize(void* p, size_t* n) { *n = 1; return 0; }
int nvrtcGetProgramLog(void* p, char* out) { out[0] = 0; return 0; }
int nvrtcVersion(int* a, int* b) { *a = 13; *b = 0; return 0; }
