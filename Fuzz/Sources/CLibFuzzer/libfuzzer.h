// libFuzzer's driver (compiler-rt, linked by `-sanitize=fuzzer`). The fuzz executables call it from their
// own entry point: SwiftPM gives an executable's `main` symbol to the module's top-level code, so libFuzzer's
// own `main` is never linked in.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *_Nonnull argc, char *_Nullable *_Nonnull *_Nonnull argv,
                        int (*_Nonnull callback)(const uint8_t *_Nullable data, size_t size));
