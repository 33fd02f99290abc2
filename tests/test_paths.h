// The folders and the binary the tests use. Defined in a source that
// tests/CMakeLists.txt generates in the build folder, so that no other test
// object depends on where the checkout is (a compiler cache can share them).
// Plain char arrays: constant-initialised, safe to read from any static
// initialiser.
#pragma once

namespace test_paths {
extern const char kSourceDir[];       // the repository
extern const char kTestDataDir[];     // tests/data
extern const char kConformanceDir[];  // tests/conformance/traces
extern const char kBinary[];          // the npusim executable
extern const char kSceneCache[];      // the compile cache the scene tests share (NPUSIM_CACHE_DIR)
extern const char kBuildDir[];        // the build folder (cmake --install reads it)
extern const char kCMake[];           // the cmake that configured it
}  // namespace test_paths

#define NPUSIM_SOURCE_DIR (::test_paths::kSourceDir)
#define NPUSIM_TEST_DATA_DIR (::test_paths::kTestDataDir)
#define NPUSIM_CONFORMANCE_DIR (::test_paths::kConformanceDir)
#define NPUSIM_BINARY (::test_paths::kBinary)
#define NPUSIM_SCENE_CACHE (::test_paths::kSceneCache)
