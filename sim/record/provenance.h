// What a run's outputs were made from (docs/outputs.md, "Provenance"): the
// npusim version and SHA-256 digests of the trace and of the platform, for
// summary.json's `provenance`, the Perfetto file's `otherData` and
// `npusim compare`.
#pragma once

#include <string>

namespace npusim::record {

// The SHA-256 of `bytes` (FIPS 180-4), as 64 lowercase hex digits: what
// `sha256sum` prints for a file of those bytes.
std::string sha256_hex(const std::string& bytes);

// For the tests: the portable computation, and whether sha256_hex uses the
// CPU's SHA instructions instead (x86-64 with SHA-NI).
namespace sha256_detail {
std::string portable_hex(const std::string& bytes);
bool uses_cpu_instructions();
}  // namespace sha256_detail

// "sha256:" + sha256_hex(bytes): the form of a digest in the outputs.
std::string digest(const std::string& bytes);

// npusim's version (CMake's project version, as `npusim --version` says it).
const char* npusim_version();

// The provenance of one run, as the writers and summary.json carry it.
struct Provenance {
  std::string version;          // npusim_version()
  std::string trace_digest;     // digest() of the trace or scene file as read
  std::string platform_digest;  // digest() of platform.json (the resolved platform, canonical)
};

}  // namespace npusim::record
