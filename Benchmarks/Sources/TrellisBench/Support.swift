// Shared by the benchmark executables: timing, scratch files, callgrind.
@_exported import BenchSupport
