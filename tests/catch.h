#pragma once
// Catch2, v2 (Debian 12) or v3 (Debian 13, Ubuntu 24.04). The suite is written
// against v2's names; tests/CMakeLists.txt defines NPUSIM_CATCH3 when it found
// v3, and the few names v3 moved are given their v2 spelling here.
#ifdef NPUSIM_CATCH3
#include <catch2/catch_all.hpp>
#include <string>
namespace Catch {
// v2's Catch::Contains is a substring matcher; v3 calls it ContainsSubstring
// (its Matchers::Contains is a range matcher).
inline Matchers::StringContainsMatcher Contains(std::string const& text,
                                                CaseSensitive sensitivity = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(text, sensitivity);
}
using Matchers::StartsWith;
using TestEventListenerBase = EventListenerBase;
}  // namespace Catch
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
