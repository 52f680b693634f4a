// The cyxla guest runtime for C++ builds: the same code as cyxla_runtime.c,
// compiled as C++ so that a one-line `clang++` command can build a guest
// (`clang++ ... kernel.cc guest-sdk/c/cyxla_runtime.cc`). Link exactly one of
// the two files into each guest.
#include "cyxla_runtime.c"
